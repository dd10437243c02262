# Sourced by tools/aarch64_check.sh and tools/pythons_check.sh, which keep a Debian root made by
# debootstrap in $root: mounting what the tests need in it, copying the working tree, reading
# pytest's closing counts. Not a command of its own.

mounted=()
# /proc, /sys and /dev for the tests, a writable /dev/shm of the root's own (the shared-memory
# tests), and the host's resolver; unmounted on exit.
mount_root() {
    mkdir -p "$root/proc" "$root/sys" "$root/dev"
    mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; mounted+=("$root/proc"); }
    mountpoint -q "$root/sys" || { mount --bind /sys "$root/sys"; mounted+=("$root/sys"); }
    mountpoint -q "$root/dev" || { mount --bind /dev "$root/dev"; mounted+=("$root/dev"); }
    mkdir -p "$root/dev/shm"
    mountpoint -q "$root/dev/shm" || { mount -t tmpfs shm "$root/dev/shm"; mounted+=("$root/dev/shm"); }
    cp -L /etc/resolv.conf "$root/etc/resolv.conf"
}
umount_root() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
    mounted=()
}
trap umount_root EXIT

# The working tree of $repo into the directory $1: tracked and untracked-but-not-ignored files,
# uncommitted edits included.
copy_tree() {
    (cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$1"
}

# The counts pytest -q ends its log $1 with ("2305 passed, 1 skipped ... in 693.37s").
pytest_summary() {
    grep -E '^=* ?[0-9]+ (passed|failed|error)|no tests ran' "$1" | tail -1 \
        | tr -d '=' | sed 's/^ *//;s/ *$//' || true
}
