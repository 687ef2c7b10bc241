#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void* (*r_malloc)(size_t); static void (*r_free)(void*); static void* (*r_calloc)(size_t,size_t);
static void* (*r_realloc)(void*,size_t); static int (*r_pm)(void**,size_t,size_t); static void* (*r_aa)(size_t,size_t);
static void* (*r_memalign)(size_t,size_t);
static char boot[65536]; static size_t boot_used = 0; static int initing = 0;
static __thread int inhook = 0; static int logging = 0; static FILE* out = 0;
static long long cur = 0, peak = 0;
static void init(void) {
  if (r_malloc || initing) return; initing = 1;
  r_malloc = dlsym(RTLD_NEXT, "malloc"); r_free = dlsym(RTLD_NEXT, "free"); r_calloc = dlsym(RTLD_NEXT, "calloc");
  r_realloc = dlsym(RTLD_NEXT, "realloc"); r_pm = dlsym(RTLD_NEXT, "posix_memalign"); r_aa = dlsym(RTLD_NEXT, "aligned_alloc");
  r_memalign = dlsym(RTLD_NEXT, "memalign"); initing = 0;
}
static void rec(char op, size_t n, void* p, size_t us) {
  if (!logging || inhook || !out) return;
  inhook = 1;
  void* frames[16]; int k = backtrace(frames, 16);
  fprintf(out, "%c %zu %zu %p %lld", op, n, us, p, cur);
  for (int i = 2; i < k; i++) { Dl_info d; if (dladdr(frames[i], &d) && d.dli_fname) { const char* b = strrchr(d.dli_fname, '/'); fprintf(out, " %s+%lx", b ? b+1 : d.dli_fname, (unsigned long)((char*)frames[i] - (char*)d.dli_fbase)); } else fprintf(out, " ?%p", frames[i]); }
  fputc('\n', out);
  inhook = 0;
}
static inline void add(void* p, size_t n, char op) { if (p) { size_t u = malloc_usable_size(p); cur += u; if (cur > peak) peak = cur; rec(op, n, p, u);} }
static inline void sub(void* p) { if (p) { size_t u = malloc_usable_size(p); cur -= u; rec('F', 0, p, u);} }
static int is_boot(void* p) { return (char*)p >= boot && (char*)p < boot + sizeof boot; }
void* malloc(size_t n) { if (!r_malloc) { init(); if (!r_malloc) { void* p = boot + boot_used; boot_used += (n + 15) & ~15; return p; } } void* p = r_malloc(n); add(p, n, 'M'); return p; }
void free(void* p) { if (!p || is_boot(p)) return; if (!r_free) init(); sub(p); r_free(p); }
void* calloc(size_t a, size_t b) { if (!r_calloc) { init(); if (!r_calloc) { void* p = boot + boot_used; boot_used += (a*b + 15) & ~15; memset(p, 0, a*b); return p; } } void* p = r_calloc(a, b); add(p, a*b, 'C'); return p; }
void* realloc(void* p, size_t n) { if (!r_realloc) init(); if (is_boot(p)) { void* q = malloc(n); if (q && p) memcpy(q, p, n); return q; } sub(p); void* q = r_realloc(p, n); if (q) add(q, n, 'R'); else if (p) add(p, 0, 'r'); return q; }
int posix_memalign(void** o, size_t al, size_t n) { if (!r_pm) init(); int rc = r_pm(o, al, n); if (!rc) add(*o, n, 'P'); return rc; }
void* aligned_alloc(size_t al, size_t n) { if (!r_aa) init(); void* p = r_aa(al, n); add(p, n, 'A'); return p; }
void* memalign(size_t al, size_t n) { if (!r_memalign) init(); void* p = r_memalign(al, n); add(p, n, 'G'); return p; }
long long mtrace_current(void) { return cur; }
long long mtrace_peak(void) { return peak; }
void mtrace_reset(void) { peak = cur; }
void mtrace_mark(const char* s) { if (!out) { const char* f = getenv("TRACE_FILE"); if (f) out = fopen(f, "w"); } if (out) { inhook=1; fprintf(out, "# %s %lld %lld\n", s, cur, peak); fflush(out); inhook=0; } }
void mtrace_log(int on) { logging = on; if (out) fflush(out); }
