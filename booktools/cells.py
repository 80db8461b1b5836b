"""Which frameworks a cell belongs to."""

from d2lcore import FRAMEWORKS


def frameworks_of(cell):
    """The frameworks whose notebooks get ``cell``: those named in its tags, or all three if it names none."""
    tags = cell.get("metadata", {}).get("tags", [])
    named = [fw for fw in FRAMEWORKS if fw in tags]
    return named or list(FRAMEWORKS)


def is_shared(cell):
    """Whether the cell carries no framework tag."""
    return len(frameworks_of(cell)) == len(FRAMEWORKS) and not any(
        fw in cell.get("metadata", {}).get("tags", []) for fw in FRAMEWORKS
    )
