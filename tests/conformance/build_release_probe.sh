#!/usr/bin/env bash
# Build a Cortex-M probe at another TFLM commit with the probes' own kit
# (../shared/tools/cortex-m/build/build.sh), for a measured target `<probe build>@<commit>`
# (tests/conformance/targets.py: RELEASE_PROBES, device_release_target):
#
#   MIRROR=<dir of bare git mirrors, as build.sh takes> \
#     tests/conformance/build_release_probe.sh <commit> <probe build> <folder>
#
#   e.g. ... 2b3f8d0f018bc9911fc134682e08fec05d851118 cortex-m7-reference \
#            ~/.cache/arenalens/cortex-m-releases
#
# leaves <folder>/<commit, 7 digits>/ holding run.py, tflm-<probe build>.elf and build_info.txt
# (the sources' commits and the compiler), which is what
#   ARENALENS_CORTEX_M_RELEASE_PROBES=<folder> python -m tests.conformance.measure \
#     --target <probe build>@<commit, 7 digits> [--models] --stale
# runs (data/<target>/probe.json records the ELF's sha256).
#
# The kit builds the probes' commit (2026-08); an older commit needs two things it does not
# offer, so this runs a copy of it with two edits:
#   * flatbuffers at the version the commit's own flatbuffers_download.sh pins (FLATBUFFERS_TAG,
#     default v23.5.26, 2b3f8d0's; the kit extracts v25.9.23, the probes' commit's);
#   * one more makefile holding `print-%` (the kit asks TFLM's Makefile for variables with it;
#     older Makefiles have no such rule).
# KIT_ONLY=1 stops after writing the edited kit (to compare it with the one that built a probe).
# Building compiles all of TFLM (tens of minutes on 2 cores); run it under `nice`.
set -euo pipefail
COMMIT=${1:?usage: build_release_probe.sh <commit> <probe build> <folder>}
PROBE=${2:?usage: build_release_probe.sh <commit> <probe build> <folder>}
FOLDER=${3:?usage: build_release_probe.sh <commit> <probe build> <folder>}
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED_KIT=${ARENALENS_CORTEX_M_PROBES:-$HERE/../../../shared/tools/cortex-m}
FOLDER=$(mkdir -p "$FOLDER" && cd "$FOLDER" && pwd)
WORK=$FOLDER/build-${COMMIT:0:7}
KIT=$WORK/kit
mkdir -p "$KIT"
cp -r "$SHARED_KIT"/build/* "$KIT"/  # the kit has folders too (ethos-u/, two-arena/)
printf 'print-%%:\n\t@echo $*=$($*)\n' > "$WORK/print.mk"
sed -i \
  -e 's|extract google+flatbuffers "$DL/flatbuffers" v25.9.23|extract google+flatbuffers "$DL/flatbuffers" ${FLATBUFFERS_TAG:-v23.5.26}|' \
  -e "s|make -f \$MK/Makefile TARGET=|make -f \$MK/Makefile -f $WORK/print.mk TARGET=|" \
  "$KIT/build.sh"
grep -q 'FLATBUFFERS_TAG' "$KIT/build.sh" && grep -q "$WORK/print.mk" "$KIT/build.sh" \
  || { echo "build_release_probe.sh: the kit's build.sh changed; edit this script" >&2; exit 1; }
[ -n "${KIT_ONLY:-}" ] && { echo "$KIT"; exit 0; }
WORKDIR=$WORK TFLM_COMMIT=$COMMIT "$KIT/build.sh" "$PROBE"
OUT=$FOLDER/${COMMIT:0:7}
mkdir -p "$OUT"
cp "$SHARED_KIT/run.py" "$OUT/run.py"
cp "$WORK/.cortexm/build/$PROBE/probe.elf" "$OUT/tflm-$PROBE.elf"
cp "$WORK/.cortexm/build/$PROBE/build_info.txt" "$OUT/build_info.txt"
echo "$OUT"
