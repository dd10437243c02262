"""Build the Cython kernels in src/oipcodec/_native, and the load generator
src/oipcodec/bench/_sender.pyx (POSIX only; it is a tool, not a kernel, so it has no pure twin
in _pure: oipcodec.bench.sender falls back to Python sockets without it).

All build switches live here:

- ``OIPCODEC_DEBUG=1``: defines ``OIPCODEC_DEBUG`` (enables the checks in
  csrc/oipcodec/common/debug.h), compiles with ``-O0 -g`` and turns on Cython line tracing for
  coverage and profilers.
- ``OIPCODEC_SANITIZE=1``: compiles and links with AddressSanitizer and UBSan (GCC/Clang only).
  Running the tests then needs the ASan runtime preloaded, see docs/development.md.
- ``OIPCODEC_ANNOTATE=1``: writes Cython's HTML annotation next to each .pyx.
- ``OIPCODEC_ONLY=name[,name]``: build only these kernel modules (a development convenience).
- ``OIPCODEC_NO_EXTENSIONS=1``: build no extension at all (the pure twins are then used).
- ``OIPCODEC_WERROR=1``: turns compiler warnings into errors (CI builds with it on Linux).
- ``OIPCODEC_NO_CLONES=1``: builds the hot loops marked in csrc/oipcodec/common/target.h once, for
  the baseline processor only, instead of also for x86-64-v3 (chosen at load time).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
NATIVE = Path("src", "oipcodec", "_native")
# Native modules outside _native, by module name: their sources (the .pyx first), built like the
# kernels (same flags) and named in OIPCODEC_ONLY by the .pyx's stem. The sender's C is a
# translation unit of its own (its POSIX feature macros come first); it needs poll() and BSD
# sockets, so Windows has only the Python twin.
TOOLS: dict[str, list[Path]] = (
    {}
    if sys.platform == "win32"
    else {
        "oipcodec.bench._sender": [
            Path("src", "oipcodec", "bench", "_sender.pyx"),
            Path("csrc", "oipcodec", "load", "sender.c"),
        ]
    }
)
# The native HTTP/2 connection (issue 47), on libnghttp2 vendored in csrc/third_party/nghttp2
# (docs/development.md says which release and why): its C is compiled into this one extension,
# no shared library, so every wheel and the sdist build it with no system package.
TOOLS["oipcodec.server.h2._session"] = [Path("src", "oipcodec", "server", "h2", "_session.pyx")]
NGHTTP2 = Path("csrc", "third_party", "nghttp2", "lib")
VENDORED: dict[str, list[Path]] = {"oipcodec.server.h2._session": sorted(NGHTTP2.glob("*.c"))}
# What lib/CMakeLists.txt and its configure checks would define, so that no config.h is needed.
NGHTTP2_MACROS: list[tuple[str, str | None]] = [
    ("BUILDING_NGHTTP2", None),
    ("NGHTTP2_STATICLIB", None),
]
if sys.platform == "win32":
    # -std=c11 hides MinGW's own WIN32, which lib/nghttp2_net.h tests for its htonl.
    NGHTTP2_MACROS += [("WIN32", "1"), ("HAVE_WINDOWS_H", "1"), ("HAVE_GETTICKCOUNT64", "1")]
else:
    NGHTTP2_MACROS += [("HAVE_ARPA_INET_H", "1"), ("HAVE_NETINET_IN_H", "1")]
    NGHTTP2_MACROS += [("HAVE_CLOCK_GETTIME", "1"), ("HAVE_DECL_CLOCK_MONOTONIC", "1")]


def flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


DEBUG = flag("OIPCODEC_DEBUG")
SANITIZE = flag("OIPCODEC_SANITIZE")
WERROR = flag("OIPCODEC_WERROR")

# One place for the Cython directives. Bounds are checked by hand in every kernel (a cursor with
# a remaining length checked before each read), so Cython's own checks are off in release builds.
DIRECTIVES: dict[str, object] = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
    "freethreading_compatible": True,
}
if DEBUG:
    DIRECTIVES["linetrace"] = True


class BuildExt(build_ext):
    """Pick warning, optimisation and sanitizer flags for the compiler actually in use, and
    compile the extensions in parallel."""

    def finalize_options(self) -> None:
        super().finalize_options()
        # pip passes no -j: without this the ten extensions compile one after another, most of
        # a fresh install's time (the README gives the figure). An explicit -j N is kept.
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        msvc = self.compiler.compiler_type == "msvc"
        exports = None
        if sys.platform.startswith("linux") and not msvc:
            # clang 14 gives the target_clones resolvers default visibility whatever
            # -fvisibility says: on ELF the linker is told the one symbol to export.
            exports = Path(self.build_temp).resolve() / "exports.map"
            exports.parent.mkdir(parents=True, exist_ok=True)
            exports.write_text("{ global: PyInit_*; local: *; };\n")
        for ext in self.extensions:
            if msvc:
                ext.extra_compile_args += ["/W3", "/Od" if DEBUG else "/O2"]
                ext.extra_compile_args += ["/WX"] if WERROR else []
                continue
            ext.extra_compile_args += ["-Wall", "-Wno-unused-function", "-std=c11"]
            # Export only PyInit_<module> (PyMODINIT_FUNC marks it visible); else every extension
            # exports Cython's globals and, with clang, the target_clones resolvers. MSVC
            # exports nothing unasked.
            ext.extra_compile_args += ["-fvisibility=hidden"]
            ext.extra_link_args += [f"-Wl,--version-script={exports}"] if exports else []
            ext.extra_compile_args += ["-Werror"] if WERROR else []
            # Python's own CFLAGS often carry -g, and debug info would be ~80% of a release wheel.
            ext.extra_compile_args += ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
            if SANITIZE:
                san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
                ext.extra_compile_args += [*san, "-fno-sanitize-recover=undefined"]
                ext.extra_link_args += san
        super().build_extensions()

    def build_extension(self, ext: Extension) -> None:
        vendored = VENDORED.get(ext.name)
        if vendored:
            # Vendored C is compiled on its own, with the extension's flags but the GNU dialect
            # (nghttp2 needs clock_gettime, which strict C11 hides) and without ever editing it.
            args = ["-std=gnu11" if a == "-std=c11" else a for a in ext.extra_compile_args]
            ext.extra_objects = [
                *ext.extra_objects,
                *self.compiler.compile(
                    [str(source) for source in vendored],
                    output_dir=self.build_temp,
                    macros=NGHTTP2_MACROS,
                    include_dirs=[str(NGHTTP2), str(NGHTTP2 / "includes")],
                    extra_postargs=args,
                    depends=[str(h) for h in NGHTTP2.rglob("*.h")],
                ),
            ]
        super().build_extension(ext)


def extensions() -> list[Extension]:
    if flag("OIPCODEC_NO_EXTENSIONS"):
        return []
    from Cython.Build import cythonize

    only = {n for n in os.environ.get("OIPCODEC_ONLY", "").split(",") if n}
    macros = [("OIPCODEC_DEBUG", "1" if DEBUG else "0")]
    if flag("OIPCODEC_NO_CLONES"):
        macros.append(("OIPCODEC_NO_CLONES", "1"))
    if DEBUG:
        macros += [("CYTHON_TRACE", "1"), ("CYTHON_TRACE_NOGIL", "1")]
    modules = {f"oipcodec._native.{pyx.stem}": [pyx] for pyx in sorted(NATIVE.glob("*.pyx"))}
    modules.update(TOOLS)
    exts = [
        Extension(
            name,
            [str(source) for source in sources],
            include_dirs=["csrc", *([str(NGHTTP2 / "includes")] if name in VENDORED else [])],
            depends=[str(h) for h in Path("csrc").rglob("*.[ch]")],
            define_macros=macros + ([("NGHTTP2_STATICLIB", None)] if name in VENDORED else []),
        )
        for name, sources in modules.items()
        if not only or sources[0].stem in only
    ]
    return cythonize(
        exts,
        compiler_directives=DIRECTIVES,
        include_path=["src", "csrc"],
        annotate=flag("OIPCODEC_ANNOTATE"),
        quiet=True,
        # The .pyx to C step in parallel too; forked workers (Linux) do not re-run this file.
        nthreads=(os.cpu_count() or 1) if sys.platform == "linux" else 0,
    )


os.chdir(ROOT)
sys.path.insert(0, str(ROOT))
setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
