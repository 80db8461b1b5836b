"""Reading back the records (:mod:`d2lcore.records`) that an executed notebook displayed: the book's record
tables (:mod:`booktools.comparison`) and the figures quoted in prose (:mod:`booktools.quotes`,
:mod:`booktools.merge`) take them from the notebooks' outputs, as data, never by parsing the text."""

from d2lcore.records import MIME


def notebook_records(nb):
    """``{name: fields}`` of the records in the outputs of a notebook (an nbformat node or its JSON as dicts);
    a later record of a name replaces an earlier one."""
    records = {}
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data", {}).get(MIME)
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                records[data["name"]] = dict(data.get("fields") or {})
    return records
