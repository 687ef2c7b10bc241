#!/usr/bin/env bash
# Build the two-buffer TFLM probe (../shared/tools/cortex-m/build/two-arena/probe_two.cc:
# MicroAllocator::Create(persistent, P, non_persistent, N)) for another core and kernel library
# than the shared Cortex-M55 reference one, against the kit's TFLM library for that target.
#
# Usage (from the checkout; everything goes to .cortexm/, which git ignores):
#   MIRROR=<dir of owner+name/repo bare mirrors> bash tests/build_two_probe.sh cortex-m3-cmsis-nn
# Targets: any of the kit's (../shared/tools/cortex-m/build/build.sh): cortex-m3-cmsis-nn,
#   cortex-m7-reference, cortex-m7-cmsis-nn, cortex-m55-reference, cortex-m55-cmsis-nn.
# Output: .cortexm/build/<target>-two/probe.elf (+ probe.map, build_info.txt), which
#   `python -m tests.two_buffers --probe <target>-two` runs.
#
# It builds the kit's library first when missing (build.sh <target>: the whole of TFLM, ~5 to
# 30 minutes on 2 cores), then compiles the kit's startup.c, probe_two.cc (-DPROBE_BAREMETAL)
# and TFLM's python_ops_resolver.cc with the flags TFLM's Makefile gives that target
# (print-CXXFLAGS/CCFLAGS/INCLUDES, -O2 as the kit) and links them with the kit's linker script
# for the target's QEMU machine; the allocator objects must come from the library.
set -euo pipefail
TARGET=${1:?usage: build_two_probe.sh <target>}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SHARED_KIT=${ARENALENS_CORTEX_M_KIT:-$REPO/../shared/tools/cortex-m/build}
KIT=$(cd "$SHARED_KIT" && pwd)
SRC=$KIT/two-arena
cd "$REPO"
CM=.cortexm
TFLM=$CM/src/tflite-micro
# TFLM_LIB=<a libtensorflow-microlite.a the kit built elsewhere at the same commit for this
# target>: link against it (read only) instead of building one; flags and headers still come
# from this checkout's .cortexm tree (extract it first with MIRROR=... if missing).
MK=tensorflow/lite/micro/tools/make
case "$TARGET" in
  cortex-m3-*) ARCH=cortex-m3; LD=mps2_an385.ld ;;
  cortex-m7-*) ARCH=cortex-m7+fp; LD=mps2_an500.ld ;;
  cortex-m55-*) ARCH=cortex-m55; LD=mps3_an547.ld ;;
  *) echo "unknown target $TARGET" >&2; exit 2 ;;
esac
case "$TARGET" in
  *-cmsis-nn) KERNELS=cmsis_nn; GEN=cortex_m_generic_${ARCH}_default_cmsis_nn_gcc ;;
  *-reference) KERNELS=; GEN=cortex_m_generic_${ARCH}_default_gcc ;;
esac
LIB=${TFLM_LIB:-$TFLM/gen/$GEN/lib/libtensorflow-microlite.a}
if [ ! -f "$LIB" ]; then
  [ -z "${TFLM_LIB:-}" ] || { echo "no $LIB" >&2; exit 1; }
  WORKDIR=$REPO JOBS=${JOBS:-2} bash "$KIT/build.sh" "$TARGET"
fi
tmake() {
  (cd $TFLM && make -f $MK/Makefile TARGET=cortex_m_generic TARGET_ARCH=$ARCH TOOLCHAIN=gcc \
     TARGET_TOOLCHAIN_ROOT=/usr/bin/ ${KERNELS:+OPTIMIZED_KERNEL_DIR=$KERNELS} "$@")
}
mvar() { tmake -s print-$1 2>/dev/null | sed -n "s/^$1=//p"; }
CXXFLAGS=$(mvar CXXFLAGS)
CCFLAGS=$(mvar CCFLAGS)
INCLUDES=$(mvar INCLUDES | sed "s#-I\([^ ]*\)#-I$TFLM/\1#g")
case "$CXXFLAGS" in *-mcpu=${ARCH%%+*}*) ;; *) echo "TFLM flags lack -mcpu=${ARCH%%+*}" >&2; exit 1 ;; esac
if [ -n "$KERNELS" ]; then
  case "$CXXFLAGS" in *-DCMSIS_NN*) ;; *) echo "CMSIS-NN flags missing" >&2; exit 1 ;; esac
fi
OUT=$CM/build/$TARGET-two
mkdir -p $OUT
eval arm-none-eabi-gcc $CCFLAGS -O2 -c "$KIT/startup.c" -o $OUT/startup.o
eval arm-none-eabi-g++ $CXXFLAGS $INCLUDES -DPROBE_BAREMETAL -O2 -c "$SRC/probe_two.cc" -o $OUT/probe.o
eval arm-none-eabi-g++ $CXXFLAGS $INCLUDES -O2 -c $TFLM/python/tflite_micro/python_ops_resolver.cc -o $OUT/python_ops_resolver.o
ARCHFLAGS=$(echo "$CXXFLAGS" | grep -o -- '-mcpu=[^ ]*\|-mfpu=[^ ]*\|-mfloat-abi=[^ ]*\|-mthumb' | tr '\n' ' ')
# shellcheck disable=SC2086
arm-none-eabi-g++ $ARCHFLAGS -nostartfiles --specs=rdimon.specs -Wl,--gc-sections \
  -Wl,-Map=$OUT/probe.map -L "$KIT" -T "$KIT/$LD" \
  $OUT/startup.o $OUT/probe.o $OUT/python_ops_resolver.o "$LIB" -lm -o $OUT/probe.elf
for o in persistent_arena_buffer_allocator.o non_persistent_arena_buffer_allocator.o micro_allocator.o; do
  grep -q "libtensorflow-microlite.a($o)" $OUT/probe.map || { echo "$o not linked from the library" >&2; exit 1; }
done
{ echo "target=$TARGET-two arch=$ARCH optimized_kernel_dir=${KERNELS:-none} probe=two-arena/probe_two.cc ld=$LD"
  echo "library=$LIB"
  grep 'tflite-micro' $CM/pinned_commits.txt | head -1 | sed "s#^[^ ]* ##" || true
  arm-none-eabi-gcc --version | head -1
  echo "probe_two.cc sha256=$(sha256sum $SRC/probe_two.cc | cut -d' ' -f1)"; } > $OUT/build_info.txt
cat $OUT/build_info.txt
