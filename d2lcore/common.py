"""The framework-neutral names that every framework module of ``d2lcore`` re-exports."""

from d2lcore.checks import check_shapes
from d2lcore.convert import to_numpy
from d2lcore.plotting import (
    Animator,
    plot,
    plt,
    set_axes,
    set_figsize,
    show_heatmaps,
    use_svg_display,
)
from d2lcore.timer import Timer

__all__ = [
    "Animator",
    "Timer",
    "check_shapes",
    "plot",
    "plt",
    "set_axes",
    "set_figsize",
    "show_heatmaps",
    "to_numpy",
    "use_svg_display",
]
