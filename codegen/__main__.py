"""`python -m codegen [--check]`: regenerate generated/ from schema/, or verify it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .bundle import BundleError
from .generate import CodegenError, Paths, check, write
from .typescript import TypeScriptError


def _ts_out(given: Path | None, out_dir: Path) -> Path | None:
    """Where the TypeScript modules go: as told; else beside the Python output when that was
    redirected (tests and tools point --out-dir at a temporary tree and must not write the
    repository's typescript/generated/); else the package's own folder."""
    if given is not None:
        return given
    return Paths.typescript if out_dir == Paths.out else out_dir / "typescript"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff if generated/ is stale")
    parser.add_argument(
        "--schema-dir", type=Path, default=Paths.schema, help="schema root (default: schema/)"
    )
    parser.add_argument("--out-dir", type=Path, default=Paths.out, help="output root (default: generated/)")
    parser.add_argument(
        "--migrations-dir",
        type=Path,
        default=Paths.migrations,
        help="where migration stubs are created (default: runtime/metis/migrations/)",
    )
    parser.add_argument(
        "--ts-out-dir",
        type=Path,
        default=None,
        help="the TypeScript package's generated modules (default: typescript/generated/, or "
        "OUT_DIR/typescript when --out-dir is given: a redirected run writes nothing elsewhere)",
    )
    parser.add_argument(
        "--python-only",
        action="store_true",
        help="leave the TypeScript package out (for a machine without Node: it is checked in CI)",
    )
    args = parser.parse_args(argv)
    paths = Paths(
        schema=args.schema_dir,
        out=args.out_dir,
        migrations=args.migrations_dir,
        typescript=None if args.python_only else _ts_out(args.ts_out_dir, args.out_dir),
    )
    skipped = " (TypeScript skipped: --python-only)" if args.python_only else ""
    try:
        if args.check:
            problems = check(paths)
            if problems:
                sys.stdout.write("".join(problems))
                print(
                    f"codegen --check: {len(problems)} file(s) differ from the schema{skipped}; "
                    "run `python -m codegen`.",
                    file=sys.stderr,
                )
                return 1
            what = "generated/ matches" if args.python_only else "generated/ and typescript/generated/ match"
            print(f"codegen --check: {what} schema/{skipped}")
            return 0
        for line in write(paths):
            print(line)
        print(f"codegen: done{skipped}")
        return 0
    except (BundleError, CodegenError, TypeScriptError, OSError) as exc:
        print(f"codegen: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
