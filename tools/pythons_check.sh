#!/usr/bin/env bash
# Build and test oipcodec on the CPythons Debian ships beyond this machine's own: a Debian 13
# (trixie, amd64) root made with debootstrap, holding trixie's python3.13 and, from sid (pinned
# low, so only these packages and what they need come from it), python3.14 (and 3.15, which
# cannot be installed yet: orjson has no 3.15 wheels). For each interpreter: a venv, the working
# tree installed with `pip install ".[test]"`, then the kernel and codec suites with
# OIPCODEC_EXPECT_NATIVE=1. One closing line per interpreter. Debian ships no free-threaded
# interpreter and no 3.10 or 3.12 in trixie or sid. Needs root on a Linux host with
#   apt-get install -y debootstrap
# Times are in docs/development.md; later runs reuse the root and the venvs and reinstall only
# the project.
#
# Usage: tools/pythons_check.sh [--root DIR] [--python "3.13 3.14"] [--suite PATHS]
#        [-- extra pytest args]
#   --root DIR      the root (default /var/tmp/oipcodec-trixie; kept between runs)
#   --python LIST   interpreters to test, space separated (default "3.13 3.14")
#   --suite PATHS   test paths, space separated (default "tests/kernels tests/codecs")
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
root=/var/tmp/oipcodec-trixie
pythons="3.13 3.14"
suite="tests/kernels tests/codecs"
mirror=http://deb.debian.org/debian
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --python) pythons="$2"; shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "pythons_check: unknown option $1" >&2; exit 2 ;;
    esac
done
extra=("$@")
case "$root" in "$repo"|"$repo"/*) echo "pythons_check: the root must be outside the repository" >&2; exit 2 ;; esac

say() { echo "== pythons_check: $*"; }

# mount_root, umount_root (on exit), copy_tree, pytest_summary
# shellcheck source=tools/debian_root.sh
. "$repo/tools/debian_root.sh"

# pip in the root asks the index this machine's pip asks (PIP_INDEX_URL / PIP_EXTRA_INDEX_URL /
# pip config), through this machine's CA bundle (PIP_CERT), copied in. Local file:// indexes
# and find-links are left out: the root cannot see them, and they hold wheels for this
# machine's Python only.
host_pip() { python3 -m pip config get "global.$1" 2>/dev/null || true; }
index_url="${PIP_INDEX_URL:-$(host_pip index-url)}"
extra_urls="${PIP_EXTRA_INDEX_URL:-$(host_pip extra-index-url)}"
extra_urls="$(tr ' ' '\n' <<<"$extra_urls" | grep -v '^file:' | tr '\n' ' ' | sed 's/ *$//' || true)"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/oipcodec-ca.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 \
    ${index_url:+PIP_INDEX_URL="$index_url"} ${extra_urls:+PIP_EXTRA_INDEX_URL="$extra_urls"} \
    "$@"; }

bootstrap() {
    if [ ! -e "$root/.oipcodec-base" ]; then
        say "debootstrap trixie into $root"
        mkdir -p "$root"
        debootstrap --variant=minbase \
            --include=python3,python3-venv,python3-dev,gcc,libc6-dev,ca-certificates \
            trixie "$root" "$mirror"
        touch "$root/.oipcodec-base"
    fi
    if [ ! -e "$root/etc/apt/sources.list.d/oipcodec.list" ]; then
        # sid is read only for the newer interpreters: pinned below trixie's 500. Its Release
        # file may be past its Valid-Until on a mirror snapshot, hence check-valid-until=no.
        echo "deb [check-valid-until=no] $mirror sid main" \
            > "$root/etc/apt/sources.list.d/oipcodec.list"
        printf 'Package: *\nPin: release n=sid\nPin-Priority: 100\n' \
            > "$root/etc/apt/preferences.d/oipcodec-sid"
        mount_root
        in_root apt-get update -qq
    fi
}

interpreter() {
    local v="$1"
    [ -x "$root/usr/bin/python$v" ] && [ -e "$root/usr/include/python$v/Python.h" ] && return 0
    mount_root
    in_root apt-get update -qq
    say "apt-get install python$v (trixie's, else sid's with what it needs from sid)"
    in_root apt-get install -y -qq "python$v-dev" "python$v-venv" > /dev/null 2>&1 ||
        in_root apt-get install -y -qq -t sid "python$v-dev" "python$v-venv" > /dev/null
}

bootstrap
mount_root
cp -L "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/oipcodec-ca.crt"

# The working tree, copied fresh for each interpreter: each builds its own extensions.
stage="$(mktemp -d)"
copy_tree "$stage"

status=0
results=()
for v in $pythons; do
    if ! interpreter "$v"; then
        results+=("python$v: not tested: Debian (trixie, sid) has no python$v package")
        status=1
        continue
    fi
    venv="/opt/venv$v"
    tree="/opt/oipcodec$v"
    rm -rf "${root:?}$tree"
    mkdir -p "$root$tree"
    cp -a "$stage"/. "$root$tree/"
    # Each build of the copy uses two compiler jobs (setuptools reads setup.cfg).
    printf '[build_ext]\nparallel = 2\n' > "$root$tree/setup.cfg"
    # (bin/python links to /usr/bin/pythonX.Y, which only the root has: test pyvenv.cfg)
    if [ ! -e "$root$venv/pyvenv.cfg" ]; then
        say "python$v: creating $venv"
        if ! in_root "python$v" -m venv "$venv" ||
            ! in_root "$venv/bin/python" -m pip install --quiet --upgrade pip; then
            rm -rf "${root:?}$venv"
            results+=("python$v: not tested: no venv with pip (the output above)")
            status=1
            continue
        fi
    fi
    t0=$(date +%s)
    if [ ! -e "$root$venv/.oipcodec-deps" ]; then
        say "python$v: pip install .[test]"
        install="$venv/bin/python -m pip install --quiet 'setuptools>=77' 'Cython>=3.1,<4' \
            wheel && $venv/bin/python -m pip install --quiet --no-build-isolation '.[test]' && \
            touch $venv/.oipcodec-deps"
    else
        say "python$v: reinstalling the project (dependencies in place)"
        install="$venv/bin/python -m pip install --quiet --no-build-isolation --no-deps \
            --force-reinstall ."
    fi
    if ! in_root sh -c "cd $tree && $install"; then
        results+=("python$v: not tested: pip install failed (the output above)")
        status=1
        continue
    fi
    say "python$v: installed in $(( $(date +%s) - t0 )) s"
    log="$root/opt/pytest-$v.log"
    t0=$(date +%s)
    set +e
    # From the copy (the tests and the tools they read), against the installed package: the
    # copy's src/ is not on sys.path, so the compiled modules come from the venv.
    # shellcheck disable=SC2086
    in_root sh -c "cd $tree && $venv/bin/python -c 'import sys, sysconfig, oipcodec; \
        print(sys.version, \"GIL disabled\" if sysconfig.get_config_var(\"Py_GIL_DISABLED\") \
        else \"GIL\", \"kernels:\", oipcodec.kernels.IMPLEMENTATION)' && \
        OIPCODEC_EXPECT_NATIVE=1 $venv/bin/python -m pytest -p no:cacheprovider -q $suite \"\$@\"" \
        sh "${extra[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" = 0 ] || status=1
    summary="$(pytest_summary "$log")"
    results+=("python$v: ${summary:-no summary} (exit $rc, $(( $(date +%s) - t0 )) s)")
done
rm -rf "$stage"
for line in "${results[@]}"; do echo "$line"; done
exit "$status"
