"""python -m booktools {kernels,notebooks,nbval,expected-outputs,html,gettext,translations,timings,sync-saved,
checked-notebooks,steps,config}: see --help."""

import argparse
import json
import sys

from booktools.paths import TIMINGS, rel, sources
from d2lcore import FRAMEWORKS


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m booktools", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("kernels", help="install the three framework kernels into this environment")
    nb = sub.add_parser("notebooks", help="split and execute the per-framework notebooks (cached)")
    nb.add_argument("--section", help="only sources whose path contains this text, e.g. nadaraya")
    nb.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        action="append",
        help="only this framework (repeatable); default: all three",
    )
    nb.add_argument("--force", action="store_true", help="execute even if the cache is current")
    nb.add_argument(
        "--jobs",
        type=int,
        help="notebooks executed at once (default: $D2L_BOOK_JOBS, else one per CPU core, at most 4)",
    )
    checks = {
        "nbval": "execute each notebook once under nbval, in a fresh environment per framework outside the"
        " repository, comparing its checked cells with the recorded outputs; the build reuses the executed"
        " notebooks",
        "expected-outputs": "record the outputs of the checked cells (after an intended change) from the executed"
        " notebooks, executing those not current",
    }
    for name, text in checks.items():
        check = sub.add_parser(name, help=text)
        check.add_argument("--section", help="only sources whose path contains this text")
        check.add_argument(
            "--framework", choices=FRAMEWORKS, action="append", help="default: all three"
        )
        if name == "nbval":
            check.add_argument(
                "--cpu",
                choices=("restricted", "native"),
                default="restricted",
                help="the kernels' CPU: an imitated AVX2 machine without AVX-512 (default) or this machine's"
                " own (booktools/cpus.py)",
            )
            check.add_argument(
                "--here",
                action="store_true",
                help="in this environment's book kernels instead (faster to repeat; NumPy 1 for all three)",
            )
            check.add_argument(
                "--python", default=sys.executable, help="the Python that makes the environments"
            )
            check.add_argument("--keep", action="store_true", help="keep the temporary folders")
    html = sub.add_parser("html", help="merge the executed notebooks and build the HTML book")
    html.add_argument(
        "--no-strict",
        action="store_true",
        help="do not turn warnings into errors, and build languages with untranslated messages",
    )
    html.add_argument(
        "--language",
        action="append",
        help="a language besides English (ru, tr, zh_CN; repeatable; 'none' for English alone); default: every"
        " published language",
    )
    sub.add_parser(
        "gettext",
        help="extract the pages' messages into _build/gettext and update the catalogues in locales/"
        " (booktools/i18n.py); the notebooks must be executed",
    )
    tr = sub.add_parser(
        "translations", help="per language and page: translated, fuzzy and untranslated messages"
    )
    tr.add_argument(
        "--check", action="store_true", help="fail if a published language is incomplete"
    )
    sub.add_parser("timings", help="print the recorded execution time of each notebook")
    sub.add_parser(
        "sync-saved", help="rewrite the pages' 'Saved in d2lcore' cells from the package"
    )
    chk = sub.add_parser(
        "checked-notebooks",
        help="the site's notebooks of one framework with the recorded outputs in their checked cells, for"
        " `pytest --nbval-lax --nbval-current-env <out>/<framework>` anywhere (booktools/checked.py)",
    )
    chk.add_argument("--framework", choices=FRAMEWORKS, required=True)
    chk.add_argument("--out", required=True, help="the folder to write <framework>/... into")
    chk.add_argument("--html", help="the built site (default: _build/html)")
    steps = sub.add_parser("steps", help="run `make <step>` for each step, timed (make test)")
    steps.add_argument("step", nargs="+")
    conf = sub.add_parser(
        "config", help="print a value of _config.yml's sphinx.config (for the workflows)"
    )
    conf.add_argument("name", help="e.g. d2l_notebooks_branch")
    args = parser.parse_args(argv)

    if args.command == "kernels":
        from booktools.kernels import install_kernels

        for folder in install_kernels():
            print(f"installed kernel {folder.name} in {folder.parent}")
    elif args.command == "notebooks":
        from booktools.execute import ExecutionFailed, execute_all

        found = sources(args.section)
        if not found:
            sys.exit(f"no notebook source matches {args.section!r}")
        try:
            execute_all(found, args.framework or list(FRAMEWORKS), force=args.force, jobs=args.jobs)
        except ExecutionFailed as err:
            sys.exit(str(err))
    elif args.command in ("nbval", "expected-outputs"):
        found = sources(args.section)
        if not found:
            sys.exit(f"no notebook source matches {args.section!r}")
        frameworks = args.framework or list(FRAMEWORKS)
        if args.command == "nbval" and args.here:
            from booktools.validate import run_nbval

            sys.exit(run_nbval(found, frameworks, cpu=args.cpu))
        if args.command == "nbval":
            from booktools.standalone import StandaloneFailed, run_all

            try:
                run_all(found, frameworks, args.cpu, python=args.python, keep_folders=args.keep)
            except StandaloneFailed as err:
                sys.exit(f"nbval: {err}")
            return
        from booktools.execute import ExecutionFailed, execute_all, record_expected

        try:
            execute_all(found, frameworks, native=True)
        except ExecutionFailed as err:
            sys.exit(str(err))
        record_expected(found, frameworks)
    elif args.command == "html":
        from booktools import i18n
        from booktools.site import build_html

        languages = args.language or list(i18n.PUBLISHED)
        unknown = [code for code in languages if code not in i18n.LANGUAGES and code != "none"]
        if unknown:
            sys.exit(
                f"--language: {unknown} are not languages of the book; it has {list(i18n.LANGUAGES)}"
            )
        languages = [code for code in languages if code != "none"]
        from booktools.execute import stale

        old = stale(sources(None), list(FRAMEWORKS))
        if old:  # the pages would show the code and outputs of another version
            where = ", ".join(f"{fw}/{rel(source)}" for source, fw in old[:3])
            message = (
                f"{len(old)} executed notebook(s) are missing or older than their sources or d2lcore "
                f"(e.g. {where}): run `python -m booktools notebooks` first, as `make html` does"
            )
            if not args.no_strict:
                sys.exit(message)
            print(f"warning: {message}", flush=True)
        build_html(strict=not args.no_strict, languages=languages)
        if languages:
            i18n.gettext()  # the English messages, against which the catalogues are checked
            if not args.no_strict:
                i18n.check_complete(languages)
                i18n.check_consistent(languages)
        for code in languages:
            i18n.build(code, strict=not args.no_strict)
    elif args.command == "gettext":
        from booktools import i18n
        from booktools.site import stage

        stage()
        i18n.gettext()
        i18n.update()
        i18n.carry_over()
    elif args.command == "translations":
        from booktools import i18n

        i18n.statistics()
        if args.check:
            i18n.check_complete()
            i18n.check_consistent()
    elif args.command == "sync-saved":
        from booktools.paths import rel
        from booktools.saved import sync

        for source in sources():
            print(f"{rel(source)}: {sync(source)} cell(s) updated")
    elif args.command == "checked-notebooks":
        from booktools.checked import NotCheckable, write_checked
        from booktools.paths import HTML

        try:
            written = write_checked(args.framework, args.out, args.html or HTML)
        except NotCheckable as err:
            raise SystemExit(str(err)) from None
        checked = sum(n for _, n in written)
        print(f"{len(written)} notebooks, {checked} checked cells, in {args.out}/{args.framework}")
    elif args.command == "steps":
        from booktools.steps import run_steps

        sys.exit(run_steps(args.step))
    elif args.command == "config":
        import yaml

        from booktools.paths import ROOT

        config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
        value = config.get("sphinx", {}).get("config", {}).get(args.name)
        if value is None:
            sys.exit(f"_config.yml has no sphinx.config.{args.name}")
        print(value)
    elif args.command == "timings":
        timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
        print(f"{'notebook':<50}" + "".join(f"{fw:>12}" for fw in FRAMEWORKS))
        totals = dict.fromkeys(FRAMEWORKS, 0.0)
        for name, row in timings.items():
            print(
                f"{name:<50}" + "".join(f"{row.get(fw, float('nan')):>11.1f}s" for fw in FRAMEWORKS)
            )
            for fw in FRAMEWORKS:
                totals[fw] += row.get(fw, 0.0)
        print(f"{'total':<50}" + "".join(f"{totals[fw]:>11.1f}s" for fw in FRAMEWORKS))


if __name__ == "__main__":
    main()
