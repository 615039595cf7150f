"""Make the screenshots and views shown on the documentation site (docs/images/).

From a reference run made here (``eviseek eval`` of the demo's three agents with the reference
policy on four dev tabletop questions, written to ``runs/demo`` relative to a scratch folder so
the report shows that path and the dataset's name, not a temporary folder), it takes browser
screenshots of the report and of an EviSeek episode page with
Debian's chromium (the browser the test suite drives), and renders a tabletop and a house view
with the simulators' own render commands. Run it again after changing the report, the viewer or
the renderers:

    PYTHONPATH=src .venv/bin/python scripts/docs_images.py

Images are written as palette PNGs to keep the repository small. The AutoTool learning curves
on the site are the plots ``scripts/autotool_learning_run.py`` writes to docs/autotool_learning/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from eviseek.types.question_file import read_questions

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
CHROMIUM = "/usr/bin/chromium"


def _eviseek(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "eviseek", *args], cwd=cwd, check=True)


def _shrink(path: Path, colours: int = 128) -> None:
    """Re-save ``path`` as an optimised palette PNG (screenshots compress far better)."""
    img = Image.open(path).convert("RGB")
    img.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def _screenshots(run: Path) -> None:
    from playwright.sync_api import sync_playwright

    episodes = sorted((run / "report" / "episodes" / "eviseek").glob("*.html"))
    if not episodes:
        raise SystemExit(f"no EviSeek episode page under {run / 'report' / 'episodes'}")
    # The EviSeek episode with the most frames shows the most of the page.
    episode = max(episodes, key=lambda p: p.read_text(encoding="utf-8").count('data-testid="frame"'))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        # Tall enough for the first figure's rotated axis labels.
        page = browser.new_page(viewport={"width": 1100, "height": 1060})
        page.goto((run / "report" / "index.html").as_uri())
        page.screenshot(path=str(OUT / "report.png"))
        page.set_viewport_size({"width": 1100, "height": 1500})  # down to the first frames
        page.goto(episode.as_uri())
        page.screenshot(path=str(OUT / "episode.png"))
        browser.close()
    for name in ("report.png", "episode.png"):
        _shrink(OUT / name)


def _views(work: Path) -> None:
    tabletop = work / "tabletop"
    _eviseek(
        "tabletop", "generate", "--n-per-subcategory", "1", "--seed", "0", "--out", str(tabletop), cwd=work
    )
    qid = next(q.id for q in read_questions(tabletop) if "correspondence" in q.id)  # a mirror scene
    _eviseek(
        "tabletop",
        "render",
        str(tabletop),
        "--id",
        qid,
        "--width",
        "480",
        "--height",
        "360",
        "--out",
        str(OUT / "tabletop.png"),
        cwd=work,
    )
    house = work / "house"
    _eviseek("house", "generate", "--split", "dev", "--out", str(house), cwd=work)
    hq = read_questions(house)[0].id
    _eviseek(
        "house",
        "render",
        str(house),
        "--id",
        hq,
        "--actions",
        "turn_right,turn_right,turn_right",
        "--width",
        "480",
        "--height",
        "360",
        "--out",
        str(OUT / "house.png"),
        cwd=work,
    )
    for name in ("tabletop.png", "house.png"):
        _shrink(OUT / name, colours=192)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="use this finished demo run instead of making one")
    parser.add_argument(
        "--screenshots-only", action="store_true", help="leave the tabletop and house views as they are"
    )
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run = args.run
        if run is None:
            run = work / "runs" / "demo"
            agents = ["--agents", "passive,single-model,eviseek", "--model", "reference"]
            where = ["--dataset", "tabletop:dev", "--limit", "4", "--out", "runs/demo", "--no-progress"]
            _eviseek("eval", *agents, *where, cwd=work)
            _eviseek("report", "runs/demo", cwd=work)
        _screenshots(run.resolve())
        if not args.screenshots_only:
            _views(work)
    for p in sorted(OUT.glob("*.png")):
        print(f"{p.relative_to(ROOT)}: {p.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
