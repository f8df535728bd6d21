"""What a window with no accessibility tree shows beside a password's label is never read, with
Debian's tesseract reading a drawn sign-in form: the same values under other labels are read,
but beside or under a password's or a PIN's label the seeing path drops them before anything
names, says or journals them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from appliance.desktop.seeing.ocr import read_image

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
REPO = Path(__file__).resolve().parents[2]
WIDE = 240
"""No text on the form is this wide at 16 px ("Ada Lovelace" is about 107 px)."""


def _form(beside: str, above: str) -> Image.Image:
    """Name and `beside` with their values to the right; `above` with its value under it."""
    image = Image.new("RGB", (520, 260), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 16)
    texts = ("Name", "Ada Lovelace", beside, "hunter2", above, "4821", "Remember me")
    laid_out = {t: draw.textlength(t, font=font) for t in texts}
    # Laid out by the system's HarfBuzz (loaded with GTK), only each first letter was drawn
    # (tests/conftest.py).
    assert all(0 < w < WIDE for w in laid_out.values()), f"the form is not drawn whole: {laid_out}"
    for y, label, value in ((20, "Name", "Ada Lovelace"), (70, beside, "hunter2")):
        draw.text((20, y), label, fill="black", font=font)
        draw.rectangle((160, y - 6, 400, y + 24), outline="black")
        draw.text((170, y), value, fill="black", font=font)
    draw.text((20, 120), above, fill="black", font=font)
    draw.rectangle((20, 146, 200, 176), outline="black")
    draw.text((30, 150), "4821", fill="black", font=font)
    draw.text((20, 215), "Remember me", fill="black", font=font)
    return image


def test_a_secret_shown_in_a_window_with_no_tree_is_not_read() -> None:
    plain = read_image(_form("Town", "Ward")).texts()
    assert {"Town", "hunter2", "Ward", "4821"} <= set(plain), plain  # legible to tesseract
    texts = read_image(_form("Password", "PIN")).texts()
    assert {"Name", "Ada Lovelace", "Password", "PIN", "Remember me"} <= set(texts), texts
    assert not any("hunter2" in t or "4821" in t for t in texts), texts


def test_text_is_drawn_whole_in_a_test_process_that_has_loaded_gtk() -> None:
    """As pytest loads them: the tests' conftest, a module that loads GTK (the status panel's
    window, as test_panel.py does at collection), then the form drawn."""
    code = ("import tests.conftest\nimport appliance.panel.window\n"
            "from tests.integration.test_seeing_secrets import _form\n"
            "_form('Town', 'Ward')\nprint('drawn')")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "drawn", done.stderr
