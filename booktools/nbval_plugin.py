"""A pytest plugin next to nbval: it keeps what nbval's one execution of a notebook produced, so the build does not
execute it again.

``python -m booktools nbval`` (booktools/validate.py) runs ``pytest --nbval-lax -p booktools.nbval_plugin`` on
notebooks it prepared: the split notebook with the recorded expected outputs in its checked cells and the
framework's kernel in its metadata. nbval executes each cell and compares the checked ones. This plugin listens to
the same kernel messages that nbval reads and turns them into the cells' outputs with nbclient's own message
handling (display updates, clearing, streams joined as the build's executor joins them). When every cell of a
notebook ran without an error, it writes the executed notebook to the path its metadata names
(``metadata.d2l.executed``), with the seconds it took and the CPU settings it ran under; booktools.validate's
``keep`` then puts it where the build reads it. A mismatch of checked outputs does not stop that, since the
notebook did execute and its outputs are what the code prints. A failed comparison gets a last line naming the
file of recorded outputs and the command that records them again after an intended change (``metadata.d2l.expected``
and ``metadata.d2l.refresh``).

It imports nothing from the book (only pytest, nbval, nbclient and nbformat), so that it also runs in the fresh
environments outside the repository where ``make nbval`` executes the notebooks (booktools/standalone.py).
"""

import copy
import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete
from nbval.plugin import IPyNbCell, NbCellError, coalesce_streams


class Recorder:
    """The executed notebook of one nbval notebook, filled cell by cell from the kernel's messages."""

    def __init__(self, notebook_file):
        self.file = notebook_file
        self.nb = copy.deepcopy(notebook_file.nb)
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        self.index = {id(cell): i for i, cell in enumerate(notebook_file.nb.cells)}
        # nbclient's handling of kernel messages, as the build's executor applies it (no kernel of its own)
        self.processor = NotebookClient(self.nb, record_timing=False)
        self.processor.reset_execution_trackers()
        self.processor.clear_before_next_output = False
        self.messages, self.msg_id, self.executed, self.failed = [], None, 0, False
        self.start = time.perf_counter()
        self.installed = False

    def install(self):
        """Listen to the messages nbval reads, and to the ids of the executions it asks for."""
        if self.installed:
            return
        read, client = self.file.get_kernel_message, self.file.kernel.kc

        def get_kernel_message(timeout=None, stream="iopub"):
            msg = read(timeout=timeout, stream=stream)
            if stream == "iopub":
                self.messages.append(msg)
            return msg

        def execute_cell_input(cell_input, allow_stdin=None):
            # as nbval does, but storing history as Jupyter does: IPython decides whether a cell ending in
            # ";" shows its value from the history, and counts executions there
            self.msg_id = client.execute(
                cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False
            )
            return self.msg_id

        # the notebook's language_info, as nbclient writes it (before any cell, so no execution is waiting)
        info = client.kernel_info(reply=True, timeout=60)
        self.nb.metadata["language_info"] = info["content"]["language_info"]
        self.file.get_kernel_message = get_kernel_message
        self.file.kernel.execute_cell_input = execute_cell_input
        self.installed = True

    def cell_done(self, item):
        """Turn the messages of ``item``'s execution into its cell's outputs."""
        index = self.index[id(item.cell)]
        cell = self.nb.cells[index]
        complete = False
        for msg in self.messages:
            if msg["parent_header"].get("msg_id") != self.msg_id:
                continue
            try:
                self.processor.process_message(msg, cell, index)
            except CellExecutionComplete:
                complete = True
                break
        self.messages, self.msg_id = [], None
        cell.outputs = coalesce_streams(cell.outputs)
        self.executed += 1
        if not complete or any(out.output_type == "error" for out in cell.outputs):
            self.failed = True

    def write(self):
        """Write the executed notebook where its metadata says, if every code cell ran without an error."""
        cells = sum(1 for cell in self.nb.cells if cell.cell_type == "code")
        if self.failed or self.executed != cells:
            return None
        d2l = self.nb.metadata["d2l"]
        target = Path(d2l.pop("executed"))
        d2l["seconds"] = round(time.perf_counter() - self.start, 1)
        d2l["cpu"] = os.environ.get(
            "D2L_CPU", "native"
        )  # booktools.cpus: the settings it ran under
        nbformat.validate(self.nb)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        nbformat.write(self.nb, tmp)
        tmp.replace(target)
        return target


RECORDERS = {}


def _recorder(item):
    return RECORDERS.get(item.parent.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    if isinstance(item, IPyNbCell) and item.parent.nodeid not in RECORDERS:
        RECORDERS[item.parent.nodeid] = None  # the kernel starts in this setup: time it too
        start = time.perf_counter()
        try:
            return (yield)
        finally:
            if "executed" in item.parent.nb.metadata.get("d2l", {}):
                RECORDERS[item.parent.nodeid] = recorder = Recorder(item.parent)
                recorder.start = start
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    recorder = _recorder(item) if isinstance(item, IPyNbCell) else None
    if recorder is None:
        return (yield)
    recorder.install()
    try:
        return (yield)
    finally:
        recorder.cell_done(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if (
        isinstance(item, IPyNbCell)
        and report.when == "call"
        and report.failed
        and call.excinfo is not None
        and isinstance(call.excinfo.value, NbCellError)
        and str(call.excinfo.value) == "Cell outputs differ"
    ):
        d2l = item.parent.nb.metadata.get("d2l", {})
        if "expected" in d2l and "refresh" in d2l:
            report.longrepr = (
                f"{report.longrepr}\n"
                f"The outputs of this checked cell (id {item.cell.get('id')}) differ from those recorded in "
                f"{d2l['expected']}.\n"
                f"If the change is intended, record the new outputs with: {d2l['refresh']}"
                "\nand review the difference (git diff) before committing it."
            )
    return report


def pytest_runtest_teardown(item, nextitem):
    if not isinstance(item, IPyNbCell):
        return
    if nextitem is not None and nextitem.parent is item.parent:
        return
    recorder = RECORDERS.pop(item.parent.nodeid, None)
    if recorder is not None:
        recorder.write()
