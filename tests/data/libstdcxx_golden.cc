// Prints libstdc++ reference behaviour as JSON for tests/runtimes/litert/test_litert_libstdcxx.py:
// unordered_set<int> iteration orders, std::sort and std::partial_sort permutations of
// (key, id) pairs compared by key only (so ties expose the exact algorithm).
// Build: g++ -O2 -std=c++17 libstdcxx_golden.cc -o golden && ./golden > libstdcxx_golden.json
#include <algorithm>
#include <cstdio>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

static void print_vector(const std::vector<int>& values) {
  std::printf("[");
  for (size_t i = 0; i < values.size(); ++i) std::printf(i ? ",%d" : "%d", values[i]);
  std::printf("]");
}

int main() {
  std::mt19937 random(12345);
  std::printf("{\"sets\":[");
  for (int case_number = 0; case_number < 40; ++case_number) {
    int count = 1 + case_number * 7;
    std::vector<int> inserted;
    std::unordered_set<int> set;
    for (int i = 0; i < count; ++i) {
      int value = static_cast<int>(random() % 400);
      inserted.push_back(value);
      set.insert(value);
    }
    std::vector<int> order(set.begin(), set.end());
    std::printf(case_number ? ",{\"inserted\":" : "{\"inserted\":");
    print_vector(inserted);
    std::printf(",\"order\":");
    print_vector(order);
    std::printf(",\"buckets\":%zu}", set.bucket_count());
  }
  std::printf("],\"sorts\":[");
  for (int case_number = 0; case_number < 60; ++case_number) {
    int count = 2 + case_number * 3;
    int distinct = 1 + case_number % 6;
    std::vector<std::pair<int, int>> items;
    for (int i = 0; i < count; ++i) items.push_back({static_cast<int>(random() % distinct), i});
    std::vector<int> keys;
    for (auto& item : items) keys.push_back(item.first);
    auto by_key = [](const std::pair<int, int>& a, const std::pair<int, int>& b) {
      return a.first < b.first;
    };
    auto sorted = items;
    std::sort(sorted.begin(), sorted.end(), by_key);
    auto heap_sorted = items;
    std::partial_sort(heap_sorted.begin(), heap_sorted.end(), heap_sorted.end(), by_key);
    std::vector<int> sort_ids, heap_ids;
    for (auto& item : sorted) sort_ids.push_back(item.second);
    for (auto& item : heap_sorted) heap_ids.push_back(item.second);
    std::printf(case_number ? ",{\"keys\":" : "{\"keys\":");
    print_vector(keys);
    std::printf(",\"sort\":");
    print_vector(sort_ids);
    std::printf(",\"partial_sort\":");
    print_vector(heap_ids);
    std::printf("}");
  }
  std::printf("]}\n");
  return 0;
}
