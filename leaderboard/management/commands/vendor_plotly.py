"""Copy plotly.js from the installed ``plotly`` Python package (its package_data) into
static/vendor/, so the portal serves its own copy (no CDN). ``--check`` only verifies that the
vendored file is the installed package's."""

import hashlib
import pathlib
import shutil

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

VENDOR = pathlib.Path(settings.BASE_DIR) / "static" / "vendor"


def bundled_plotly_js() -> pathlib.Path:
    import plotly  # deferred: plotly is large; only this command needs it

    return pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Command(BaseCommand):
    help = "Copy plotly.min.js (MIT) from the installed plotly package into static/vendor/."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if the vendored copy differs")

    def handle(self, *args, check=False, **opts):
        import plotly  # deferred: as above

        src = bundled_plotly_js()
        if not src.exists():
            raise CommandError(f"{src} not found: is the plotly package installed?")
        dst = VENDOR / "plotly.min.js"
        if check:
            if not dst.exists() or _digest(dst) != _digest(src):
                raise CommandError(f"{dst} differs from plotly {plotly.__version__}'s bundle; run vendor_plotly")
            self.stdout.write(f"{dst} is plotly {plotly.__version__}'s bundle")
            return
        VENDOR.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        lic = next(pathlib.Path(plotly.__file__).parent.parent.glob("plotly-*.dist-info/licenses/LICENSE.txt"), None)
        if lic:
            shutil.copyfile(lic, VENDOR / "plotly.LICENSE.txt")
        self.stdout.write(f"copied {src} ({dst.stat().st_size} bytes) to {dst}")
