#!/usr/bin/env bash
# Build and test oipcodec on CPythons beyond this machine's own, in two ways.
# In a Debian 13 (trixie, amd64) root made with debootstrap (needs root on a Linux host with
# `apt-get install -y debootstrap`): trixie's python3.13 and, from sid (pinned low, so only
# these packages and what they need come from it), python3.14 (and 3.15, which cannot be
# installed yet: orjson has no 3.15 wheels). Debian ships no free-threaded interpreter and no
# 3.10 or 3.12 in trixie or sid.
# On this host, without a root (--host-python, repeatable): any interpreter already installed
# (pyenv's, a distribution's), each in a fresh venv under /var/tmp/oipcodec-host.
# For each interpreter: a venv, the working tree installed with its test extra
# (tools/install_test_extra.py: dependencies from wheels only, the test dependencies without a
# wheel for that interpreter left out and named), then the kernel and codec suites (and, on the
# host, tests/hardening/test_threads.py) with OIPCODEC_EXPECT_NATIVE=1. One closing line per
# interpreter. Times are in docs/development.md; later root runs reuse the root and its venvs
# and reinstall only the project.
#
# Usage: tools/pythons_check.sh [--root DIR] [--python "3.13 3.14"] [--host-python PATH]...
#        [--suite PATHS] [-- extra pytest args]
#   --root DIR          the root (default /var/tmp/oipcodec-trixie; kept between runs)
#   --python LIST       root interpreters to test, space separated (default "3.13 3.14",
#                       none when --host-python is given)
#   --host-python PATH  a host interpreter to test (repeatable); no root is made unless
#                       --python is given too
#   --suite PATHS       test paths, space separated (default "tests/kernels tests/codecs",
#                       on the host with tests/hardening/test_threads.py)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
root=/var/tmp/oipcodec-trixie
pythons=""
hosts=()
suite=""
mirror=http://deb.debian.org/debian
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --python) pythons="$2"; shift 2 ;;
        --host-python) hosts+=("$2"); shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "pythons_check: unknown option $1" >&2; exit 2 ;;
    esac
done
extra=("$@")
[ -n "$pythons" ] || [ ${#hosts[@]} -gt 0 ] || pythons="3.13 3.14"
hostdir=/var/tmp/oipcodec-host
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

# The working tree, copied fresh for each interpreter: each builds its own extensions.
stage="$(mktemp -d)"
trap 'umount_root; rm -rf "$stage"' EXIT
copy_tree "$stage"

status=0
results=()
# check LABEL RUN PREFIX PYTHON BASE NAME SUITE: through RUN (in_root or on_host), make the venv
# BASE/venvNAME with PYTHON unless it is there, copy the tree to BASE/oipcodecNAME, install it
# and run SUITE from it; PREFIX is where RUN's / lies on this machine. Adds LABEL's closing line.
check() {
    local label="$1" run="$2" prefix="$3" python="$4" base="$5" name="$6" suite="$7"
    local venv="$base/venv$name" tree="$base/oipcodec$name" install log rc t0 summary left_out
    rm -rf "$prefix$tree"
    mkdir -p "$prefix$tree"
    cp -a "$stage"/. "$prefix$tree/"
    # Each build of the copy uses two compiler jobs (setuptools reads setup.cfg).
    printf '[build_ext]\nparallel = 2\n' > "$prefix$tree/setup.cfg"
    # (in the root, bin/python links to /usr/bin/pythonX.Y, which only the root has: test
    # pyvenv.cfg)
    if [ ! -e "$prefix$venv/pyvenv.cfg" ]; then
        say "$label: creating $venv"
        if ! "$run" "$python" -m venv "$venv" ||
            ! "$run" "$venv/bin/python" -m pip install --quiet --upgrade pip; then
            rm -rf "$prefix$venv"
            results+=("$label: not tested: no venv with pip (the output above)")
            status=1
            return
        fi
    fi
    t0=$(date +%s)
    if [ ! -e "$prefix$venv/.oipcodec-deps" ]; then
        say "$label: pip install .[test]"
        install="$venv/bin/python tools/install_test_extra.py $venv/.oipcodec-left-out && \
            touch $venv/.oipcodec-deps"
    else
        say "$label: reinstalling the project (dependencies in place)"
        install="$venv/bin/python -m pip install --quiet --no-build-isolation --no-deps \
            --force-reinstall ."
    fi
    if ! "$run" sh -c "cd $tree && $install"; then
        results+=("$label: not tested: pip install failed (the output above)")
        status=1
        return
    fi
    say "$label: installed in $(( $(date +%s) - t0 )) s"
    log="$prefix$base/pytest-$name.log"
    t0=$(date +%s)
    set +e
    # From the copy (the tests and the tools they read), against the installed package: the
    # copy's src/ is not on sys.path, so the compiled modules come from the venv.
    # shellcheck disable=SC2086
    "$run" sh -c "cd $tree && $venv/bin/python -c 'import sys, sysconfig, oipcodec; \
        print(sys.version, \"GIL disabled\" if sysconfig.get_config_var(\"Py_GIL_DISABLED\") \
        else \"GIL\", \"kernels:\", oipcodec.kernels.IMPLEMENTATION)' && \
        OIPCODEC_EXPECT_NATIVE=1 $venv/bin/python -m pytest -p no:cacheprovider -q $suite \"\$@\"" \
        sh "${extra[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" = 0 ] || status=1
    summary="$(pytest_summary "$log")"
    left_out="$(paste -sd ';' "$prefix$venv/.oipcodec-left-out" 2>/dev/null || true)"
    results+=("$label: ${summary:-no summary} (exit $rc, $(( $(date +%s) - t0 )) s${left_out:+; left out: $left_out})")
}

if [ -n "$pythons" ]; then
    bootstrap
    mount_root
    cp -L "${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/oipcodec-ca.crt"
fi
for v in $pythons; do
    if ! interpreter "$v"; then
        results+=("python$v: not tested: Debian (trixie, sid) has no python$v package")
        status=1
        continue
    fi
    check "python$v" in_root "$root" "python$v" /opt "$v" "${suite:-tests/kernels tests/codecs}"
done

# Host interpreters: this machine's pip settings as they are (its indexes, constraints and CA
# bundle), nothing of the developer's environment on the path.
on_host() { env -u PYTHONPATH -u PYTHONHOME -u VIRTUAL_ENV "$@"; }
for python in "${hosts[@]}"; do
    if ! name="$(on_host "$python" -c 'import platform, sys; print(platform.python_version() + sys.abiflags)')"; then
        results+=("$python: not tested: it does not run")
        status=1
        continue
    fi
    rm -rf "${hostdir:?}/venv$name"  # a fresh venv each run: the install from the index is tested too
    check "python$name ($python)" on_host "" "$python" "$hostdir" "$name" \
        "${suite:-tests/kernels tests/codecs tests/hardening/test_threads.py}"
done
for line in "${results[@]}"; do echo "$line"; done
exit "$status"
