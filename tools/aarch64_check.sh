#!/usr/bin/env bash
# Build and test oipcodec on AArch64 under emulation: a Debian arm64 root (debootstrap, run by
# qemu-user through binfmt_misc), the working tree installed there with `pip install ".[test]"`,
# then the kernel and codec suites once with the NEON paths on and once capped off
# (OIPCODEC_SIMD=0). One closing line per run. Needs root on a Linux host with
#   apt-get install -y qemu-user-static binfmt-support debootstrap
# The first run takes about 16 minutes (root + dependencies); later runs reuse the root and the
# venv and reinstall only the project (unchanged extensions are not recompiled). Not part of
# .ci/run: it is too slow for CI's budget. See docs/development.md.
#
# Usage: tools/aarch64_check.sh [--root DIR] [--suite PATHS] [--only-neon|--only-scalar]
#        [--shell] [-- extra pytest args]
#   --root DIR     the arm64 root (default /var/tmp/oipcodec-arm64; kept between runs)
#   --suite PATHS  test paths, space separated (default "tests/kernels tests/codecs")
#   --only-neon / --only-scalar   run one of the two passes
#   --shell        install, then open a shell in the root instead of testing
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
root=/var/tmp/oipcodec-arm64
suite="tests/kernels tests/codecs"
passes="neon scalar"
shell=0
suite_release=bookworm
mirror=http://deb.debian.org/debian
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --only-neon) passes="neon"; shift ;;
        --only-scalar) passes="scalar"; shift ;;
        --shell) shell=1; shift ;;
        --) shift; break ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "aarch64_check: unknown option $1" >&2; exit 2 ;;
    esac
done
extra=("$@")
case "$root" in "$repo"|"$repo"/*) echo "aarch64_check: the root must be outside the repository" >&2; exit 2 ;; esac

say() { echo "== aarch64_check: $*"; }

# qemu-user must be registered for AArch64 ELF files with the F flag (the interpreter is opened
# on the host, so the root needs no copy of it).
ensure_binfmt() {
    if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    fi
    if ! grep -qs enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
        update-binfmts --enable qemu-aarch64
    fi
    grep -q 'flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 || {
        echo "aarch64_check: qemu-aarch64 binfmt lacks the F flag" >&2; exit 1; }
}

# mount_root, umount_root (on exit), copy_tree, pytest_summary
# shellcheck source=tools/debian_root.sh
. "$repo/tools/debian_root.sh"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/venv/bin:/usr/bin:/bin \
    LANG=C.UTF-8 PIP_CERT=/etc/oipcodec-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT=180 "$@"; }

bootstrap() {
    if [ ! -e "$root/.oipcodec-stage1" ]; then
        say "debootstrap first stage into $root"
        mkdir -p "$root"
        debootstrap --arch=arm64 --foreign --variant=minbase \
            --include=python3,python3-venv,python3-dev,gcc,libc6-dev,ca-certificates \
            "$suite_release" "$root" "$mirror"
        touch "$root/.oipcodec-stage1"
    fi
    if [ ! -e "$root/.oipcodec-stage2" ]; then
        say "debootstrap second stage (under qemu)"
        chroot "$root" /debootstrap/debootstrap --second-stage
        touch "$root/.oipcodec-stage2"
    fi
}

ensure_binfmt
bootstrap
mount_root
# pip reaches the index through this machine's CA bundle (PIP_CERT), so the root gets a copy.
cp -L "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/oipcodec-ca.crt"

# The working tree (tracked and untracked-but-not-ignored files, uncommitted edits included)
# replaces /opt/oipcodec; build/ and the generated .c files there are kept, so setuptools
# recompiles only the extensions whose sources changed.
say "copying the working tree"
mkdir -p "$root/opt/oipcodec"
stage="$(mktemp -d)"
copy_tree "$stage"
# Everything else goes; the generated .c files stay (Cython regenerates one only when its .pyx
# is newer, and the copy keeps the tree's times).
find "$root/opt/oipcodec" -mindepth 1 ! -path "$root/opt/oipcodec/build" \
    ! -path "$root/opt/oipcodec/build/*" ! -path "$root/opt/oipcodec/src/oipcodec/_native/*.c" \
    -type f -delete
cp -a "$stage"/. "$root/opt/oipcodec/"
rm -rf "$stage"
# The copy only: build the extensions two at a time (setuptools reads setup.cfg).
printf '[build_ext]\nparallel = %s\n' "$(nproc)" > "$root/opt/oipcodec/setup.cfg"

if [ ! -x "$root/opt/venv/bin/python" ]; then
    say "creating the venv"
    in_root python3 -m venv /opt/venv
    in_root python -m pip install --quiet --upgrade pip
fi
say "pip install .[test] (build under qemu)"
t0=$(date +%s)
if [ ! -e "$root/opt/venv/.oipcodec-deps" ]; then
    in_root sh -c 'cd /opt/oipcodec && python -m pip install --quiet "setuptools>=77" "Cython>=3.1,<4" wheel && python -m pip install --quiet --no-build-isolation ".[test]"'
    touch "$root/opt/venv/.oipcodec-deps"
else
    # Dependencies are in place: rebuild and reinstall the project only.
    in_root sh -c 'cd /opt/oipcodec && python -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .'
fi
say "installed in $(( $(date +%s) - t0 )) s"
in_root sh -c 'cd / && python -c "import platform, oipcodec; print(\"oipcodec\", oipcodec.__version__, platform.machine(), \"kernels:\", oipcodec.kernels.IMPLEMENTATION)"'

if [ "$shell" = 1 ]; then
    in_root sh -c 'cd /opt/oipcodec && exec bash -i'
    exit 0
fi

status=0
results=()
for pass in $passes; do
    simd=""
    [ "$pass" = scalar ] && simd=0
    say "pass $pass: pytest $suite (OIPCODEC_SIMD=${simd:-unset})"
    log="$root/opt/pytest-$pass.log"
    t0=$(date +%s)
    set +e
    # shellcheck disable=SC2086
    in_root sh -c "cd /opt/oipcodec && OIPCODEC_EXPECT_NATIVE=1 ${simd:+OIPCODEC_SIMD=$simd} \
        python -m pytest -p no:cacheprovider -q $suite \"\$@\"" sh "${extra[@]}" \
        2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" = 0 ] || status=1
    summary="$(pytest_summary "$log")"
    results+=("aarch64 $pass (OIPCODEC_SIMD=${simd:-unset}): ${summary:-no summary} (exit $rc, $(( $(date +%s) - t0 )) s)")
done
for line in "${results[@]}"; do echo "$line"; done
exit "$status"
