"""What the omni-bench plotting scripts share: omni-bench's exit codes, and
matplotlib set to draw into files (no display needed)."""

import sys

EXIT_USAGE = 2
EXIT_UNAVAILABLE = 6


def load_matplotlib(tool):
    """Selects matplotlib's file backend and loads pyplot; exits 6 with the fix
    when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401 (the caller imports it by name)
    except ImportError:
        sys.stderr.write("%s: matplotlib is missing: install python3-matplotlib "
                         "(apt-get install python3-matplotlib) or pip install matplotlib\n" % tool)
        sys.exit(EXIT_UNAVAILABLE)
