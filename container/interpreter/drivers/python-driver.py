"""The Python side of a code context: one long-lived CPython that runs cells for the container
server, one at a time, in one namespace, and reports what each does the moment it happens.

It talks to the server over fd 3 in frames: a 5-byte header (payload length, big-endian u32; kind,
one byte) and the payload. Kind 3 is a JSON message both ways; kinds 1 and 2 (this side only) are
raw stdout and stderr bytes. The server sends `run` {id, code, env?} and `interrupt` {id}; this side sends
`ready`, then per cell any number of output frames, `result` {id, result} and `error` {id, error},
and `done` {id} last.

Everything the cell writes to fd 1 and 2, subprocesses included, goes through pipes this driver reads
and forwards, so output and results leave in the order they happened, and nothing is line-buffered.
An interrupt arrives as a message (a signal from outside would have to cross whatever wraps the
interpreter); a reader thread turns it into SIGINT for this process, which the cell sees as
KeyboardInterrupt. The main thread blocks SIGINT while it writes a frame, so a frame is never cut.

The server runs this file (`python3 python-driver.py python-charts.py`; isolation lets the
interpreter see both). The chart reader's source is read at start, so a context never depends on
finding it later, and compiled only when a cell first shows a matplotlib figure. Run as a script,
Python puts this file's folder first on sys.path; cells see the working directory there instead, as
in `python3 -c` or a notebook.
"""
import ast
import base64
import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import linecache
import os
import queue
import re
import select
import signal
import struct
import sys
import textwrap
import threading
import traceback

if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    sys.path[0] = ""

CONTROL_FD = 3
HEADER = struct.Struct(">IB")
STDOUT, STDERR, MESSAGE = 1, 2, 3
READ_CHUNK = 65536
CELL_PREFIX = "<cell-"


def _read_charts_source():
    """The chart reader's source, from the file named after the driver's (before main() clears the arguments)."""
    if len(sys.argv) < 2:
        return None
    try:
        with open(sys.argv[1], encoding="utf-8") as file:
            return file.read()
    except OSError:
        return None


CHARTS_SOURCE = _read_charts_source()
TOP_LEVEL_AWAIT = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)

# ── the channel to the server ──────────────────────────────────────────────

_send_lock = threading.Lock()
_MAIN = threading.main_thread()


class _SigintBlocked:
    """Holds SIGINT back in the main thread (others block it for good) for the length of a write."""

    def __enter__(self):
        self.main = threading.current_thread() is _MAIN
        if self.main:
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc):
        if self.main:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def send_frame(kind, payload):
    data = memoryview(HEADER.pack(len(payload), kind) + payload)
    with _SigintBlocked(), _send_lock:
        while data:
            written = os.write(CONTROL_FD, data)
            data = data[written:]


def send(message):
    send_frame(MESSAGE, json.dumps(message, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace"))


def read_exact(size):
    chunks = []
    while size > 0:
        chunk = os.read(CONTROL_FD, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# ── output: fds 1 and 2 are pipes this driver empties ──────────────────────

_output_pipes = {}
_forward_lock = threading.Lock()


def capture_output():
    for fd, kind in ((1, STDOUT), (2, STDERR)):
        read_end, write_end = os.pipe()
        os.dup2(write_end, fd)
        os.close(write_end)
        os.set_blocking(read_end, False)
        _output_pipes[read_end] = kind
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = _text_stream(1)
    sys.stderr = _text_stream(2)
    sys.__stdout__, sys.__stderr__ = sys.stdout, sys.stderr


def _text_stream(fd):
    import io

    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True)


def _forward(read_ends):
    """Sends what the given pipes hold now. The caller holds _forward_lock."""
    for read_end in read_ends:
        while read_end in _output_pipes:
            try:
                data = os.read(read_end, READ_CHUNK)
            except BlockingIOError:
                break
            if not data:
                del _output_pipes[read_end]
                break
            send_frame(_output_pipes[read_end], data)


def forward_output_forever():
    while _output_pipes:
        ready, _, _ = select.select(list(_output_pipes), [], [])
        with _forward_lock:
            _forward(ready)


def flush_output():
    """Everything written to fd 1 and 2 so far is sent before whatever comes next."""
    with _SigintBlocked():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        with _forward_lock:
            _forward(list(_output_pipes))


# ── interrupts ──────────────────────────────────────────────────────────────


class _Cell:
    running = None  # id of the cell running now
    interrupt_for = None  # id of the cell an interrupt was asked for


def request_interrupt(cell_id):
    if _Cell.running is not None and _Cell.running == cell_id:
        _Cell.interrupt_for = cell_id
        os.kill(os.getpid(), signal.SIGINT)


def on_sigint(signum, frame):
    if _Cell.running is not None and _Cell.interrupt_for == _Cell.running:
        _Cell.interrupt_for = None
        raise KeyboardInterrupt


# ── rich results ────────────────────────────────────────────────────────────

REPR_METHODS = (
    ("_repr_html_", "html"),
    ("_repr_markdown_", "markdown"),
    ("_repr_svg_", "svg"),
    ("_repr_png_", "png"),
    ("_repr_jpeg_", "jpeg"),
    ("_repr_json_", "json"),
    ("_repr_latex_", "latex"),
    ("_repr_javascript_", "javascript"),
)
MIME_FORMATS = {
    "text/plain": "text",
    "text/html": "html",
    "text/markdown": "markdown",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpeg",
    "application/json": "json",
    "text/latex": "latex",
    "application/javascript": "javascript",
}
BINARY_FORMATS = ("png", "jpeg")


def _warn(message):
    try:
        sys.stderr.write(message + "\n")
    except Exception:
        pass


def _call_repr(obj, method):
    if isinstance(obj, type):
        return None
    try:
        bound = getattr(obj, method, None)
    except Exception:
        return None
    if not callable(bound):
        return None
    try:
        data = bound()
    except Exception as error:
        _warn(f"{type(obj).__name__}.{method}() failed: {type(error).__name__}: {error}")
        return None
    if isinstance(data, tuple) and len(data) == 2:
        data = data[0]
    return data


def _add_format(bundle, key, data):
    if data is None or key in bundle:
        return
    if key in BINARY_FORMATS:
        data = base64.b64encode(data).decode("ascii") if isinstance(data, (bytes, bytearray)) else str(data)
    elif key == "json":
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except ValueError:
                return
    elif not isinstance(data, str):
        data = str(data)
    bundle[key] = data


def _is_figure(obj):
    figure_module = sys.modules.get("matplotlib.figure")
    return figure_module is not None and isinstance(obj, figure_module.Figure)


def _figure_png(figure):
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


# ── charts as data: a figure's structure beside its PNG ─────────────────────

# Set to "off" (for a run, a context or the sandbox) for figures as PNG alone; protocol/code-chart.ts.
CHART_DATA_ENV = "SANDBOX_CHART_DATA"
_chart_reader = None


def _charts():
    """The chart reader module, compiled on its first use."""
    global _chart_reader
    if _chart_reader is None:
        module = type(sys)("sandbox_charts")
        exec(compile(CHARTS_SOURCE, "<sandbox_charts>", "exec"), module.__dict__)
        _chart_reader = module
    return _chart_reader


def figure_chart(figure):
    """The figure's chart, or None (no axes, or chart data off). Reading it never fails the cell:
    whatever goes wrong is a chart of type unknown that says what."""
    if CHARTS_SOURCE is None or os.environ.get(CHART_DATA_ENV, "").strip().lower() == "off":
        return None
    try:
        chart = _charts().figure_chart(figure)
        json.dumps(chart, allow_nan=False)  # what the server can parse: no NaN, no stray types
        return chart
    except Exception as error:
        return {"type": "unknown", "title": None, "elements": [], "reason": f"the chart reader failed: {type(error).__name__}: {error}"}


def _json_value(obj):
    """A dict's JSON form, and a DataFrame's data (columns, index, rows), or None."""
    if isinstance(obj, dict):
        try:
            return json.loads(json.dumps(obj, allow_nan=False))
        except (TypeError, ValueError):
            return None
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(obj, pandas.DataFrame):
        try:
            return json.loads(obj.to_json(orient="split", date_format="iso", default_handler=str))
        except Exception:
            return None
    return None


def mime_bundle(obj, raw=False):
    bundle = {}
    if raw and isinstance(obj, dict):
        for mime, data in obj.items():
            if mime in MIME_FORMATS:
                _add_format(bundle, MIME_FORMATS[mime], data)
        return bundle
    if _is_figure(obj):
        _add_format(bundle, "png", _figure_png(obj))  # first: the chart reads the ticks as drawn
        chart = figure_chart(obj)
        if chart is not None:
            bundle["chart"] = chart
    mimebundle = _call_repr(obj, "_repr_mimebundle_")
    if isinstance(mimebundle, dict):
        for mime, data in mimebundle.items():
            if mime in MIME_FORMATS:
                _add_format(bundle, MIME_FORMATS[mime], data)
    for method, key in REPR_METHODS:
        if key not in bundle:
            _add_format(bundle, key, _call_repr(obj, method))
    if "json" not in bundle:
        _add_format(bundle, "json", _json_value(obj))
    if "text" not in bundle:
        try:
            bundle["text"] = repr(obj)
        except Exception as error:
            bundle["text"] = f"<{type(obj).__name__} object: repr() failed: {error}>"
    return bundle


def send_result(obj, main, raw=False):
    bundle = mime_bundle(obj, raw)
    bundle["isMainResult"] = main
    flush_output()
    send({"type": "result", "id": _Cell.running, "result": bundle})


def display(*objs, raw=False, **_ignored):
    """Shows each object as a result now, mid-cell (like IPython's display)."""
    for obj in objs:
        send_result(obj, main=False, raw=raw)


# ── matplotlib: figures come back as PNG results ────────────────────────────

BACKEND = "sandbox_inline"
BACKEND_SOURCE = '''
from matplotlib.backend_bases import _Backend, FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg


@_Backend.export
class _BackendSandboxInline(_Backend):
    FigureCanvas = FigureCanvasAgg
    FigureManager = FigureManagerBase

    @staticmethod
    def show(*args, **kwargs):
        show_figures()
'''


def show_figures():
    """Every open figure as a result, then closed (what plt.show() and the end of a cell do)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        display(pyplot.figure(number))
    pyplot.close("all")


def _close_figure(figure):
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(figure)


class _BackendLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.show_figures = show_figures
        exec(compile(BACKEND_SOURCE, "<sandbox_inline>", "exec"), module.__dict__)


def _configure_matplotlib(module):
    """Our backend as matplotlib's default (unless MPLBACKEND says otherwise)."""
    if "MPLBACKEND" not in os.environ:
        module.rcParams["backend"] = "module://" + BACKEND


def _configure_ipython_display(module):
    """IPython's display() (what `from IPython.display import display` gets) shows results here."""
    module.display = display


# Modules set up as they are first imported, before anything else can import from them.
CONFIGURED_MODULES = {
    "matplotlib": _configure_matplotlib,
    "IPython.core.display_functions": _configure_ipython_display,
}


class _ConfiguringLoader(importlib.abc.Loader):
    """A module's own loader, and then our setup of it."""

    def __init__(self, loader, configure):
        self.loader = loader
        self.configure = configure

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.configure(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _SandboxImports(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname == BACKEND:
            return importlib.util.spec_from_loader(fullname, _BackendLoader())
        configure = CONFIGURED_MODULES.get(fullname)
        if configure is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _ConfiguringLoader(spec.loader, configure)
        return spec


# ── errors ──────────────────────────────────────────────────────────────────

# Debian packages for modules whose package name is not python3-<module>.
DEBIAN_PACKAGES = {
    "PIL": "python3-pil",
    "sklearn": "python3-sklearn",
    "skimage": "python3-skimage",
    "yaml": "python3-yaml",
    "cv2": "python3-opencv",
    "bs4": "python3-bs4",
    "dateutil": "python3-dateutil",
    "Crypto": "python3-pycryptodome",
    "serial": "python3-serial",
    "magic": "python3-magic",
    "git": "python3-git",
}


def install_hint(error):
    module = (getattr(error, "name", None) or "").split(".")[0]
    if not module or module in sys.builtin_module_names:
        return None
    package = DEBIAN_PACKAGES.get(module, "python3-" + module.lower().replace("_", "-"))
    return f"install the Debian package {package} (apt-get install -y {package}); the Python package index is not reachable"


def error_payload(error):
    if isinstance(error, SyntaxError) and error.filename and error.filename.startswith(CELL_PREFIX):
        lines = traceback.format_exception_only(type(error), error)
    else:
        tb = error.__traceback__
        # The driver's own frames are not the user's business: start at the first frame of a cell,
        # and leave out the interrupt handler an interrupt comes through.
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(CELL_PREFIX):
            tb = tb.tb_next
        report = traceback.TracebackException(type(error), error, tb)
        handler = on_sigint.__code__
        report.stack = traceback.StackSummary.from_list(
            [frame for frame in report.stack if not (frame.name == handler.co_name and frame.filename == handler.co_filename)]
        )
        lines = list(report.format())
    text = "".join(lines).rstrip("\n").split("\n")
    value = str(error)
    if isinstance(error, ModuleNotFoundError):
        hint = install_hint(error)
        if hint:
            value = f"{value}: {hint}"
            text[-1] = f"{text[-1]}: {hint}"
    return {"name": type(error).__name__, "value": value, "traceback": text}


# ── running cells ───────────────────────────────────────────────────────────

# Cells run in a module of their own, registered as __main__ (so pickle finds classes they define).
_user_module = type(sys)("__main__")
namespace = _user_module.__dict__
namespace.update({"__builtins__": builtins, "display": display})
_loop = None


def _evaluate(code):
    global _loop
    value = eval(code, namespace)
    if code.co_flags & inspect.CO_COROUTINE:
        if _loop is None:
            import asyncio

            _loop = asyncio.new_event_loop()
        value = _loop.run_until_complete(value)
    return value


SHELL_SYNTAX = re.compile(r"^[ \t]*[!%]", re.MULTILINE)
_shell = None


def ipython_shell():
    """IPython's shell, made on first need: what `!cmd`, `%magic` and `%%cell magic` lines run on."""
    global _shell
    if _shell is None:
        from IPython.core.interactiveshell import InteractiveShell

        _shell = InteractiveShell.instance(user_module=_user_module, user_ns=namespace, colors="NoColor")
        # The shell's display hooks stay ours: results leave as this driver sends them.
        sys.displayhook = sys.__displayhook__
        _shell.display_pub.publish = lambda data, metadata=None, **_: display(data, raw=True)
        _shell.system = _system
    return _shell


def _system(command):
    """`!cmd`: its output straight into the cell's (not through a terminal); an interrupt is passed on to it."""
    import subprocess

    child = subprocess.Popen(_shell.var_expand(command, depth=2), shell=True, executable="/bin/bash" if os.path.exists("/bin/bash") else None)
    try:
        status = child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=1)
        except subprocess.TimeoutExpired:
            child.kill()
        raise
    _shell.user_ns["_exit_code"] = status


def source_of(code):
    """The cell as Python: an indented cell is dedented; `!` and `%` lines become IPython's calls."""
    if code[:1] in (" ", "\t"):
        code = textwrap.dedent(code)
    if SHELL_SYNTAX.search(code):
        try:
            from IPython.core.inputtransformer2 import TransformerManager
        except ImportError:
            return code  # the compile says what is wrong; the hint names the package
        ipython_shell()
        code = TransformerManager().transform_cell(code)
    return code


def run_cell(cell_id, code, number):
    """Runs one cell; returns the exception it ended with, if any (interrupts included)."""
    code = source_of(code)
    filename = f"{CELL_PREFIX}{number}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    _Cell.running = cell_id
    try:
        try:
            tree = ast.parse(code, filename, "exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            _evaluate(compile(tree, filename, "exec", flags=TOP_LEVEL_AWAIT))
            if last is not None:
                value = _evaluate(compile(ast.Expression(last.value), filename, "eval", flags=TOP_LEVEL_AWAIT))
                if value is not None:
                    namespace["_"] = value
                    send_result(value, main=True)
                    if _is_figure(value):
                        _close_figure(value)  # shown as the cell's value: not again as a figure left open
        finally:
            show_figures()  # figures left open, after an error too
        return None
    except BaseException as error:  # the user's error (KeyboardInterrupt and SystemExit too) is a result
        return error
    finally:
        _Cell.running = None
        _Cell.interrupt_for = None


def apply_run_env(env):
    """Sets a run's own variables; returns what puts them back as they were."""
    if not env:
        return lambda: None
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)

    def restore():
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    return restore


def serve(cell_id, code, number, env=None):
    error = None
    restore_env = apply_run_env(env)
    try:
        error = run_cell(cell_id, code, number)
    except KeyboardInterrupt as late:  # came while the cell was being wound up
        error = late
    finally:
        restore_env()
    _Cell.running = None
    _Cell.interrupt_for = None
    if error is not None:
        flush_output()
        send({"type": "error", "id": cell_id, "error": error_payload(error)})
    flush_output()
    send({"type": "done", "id": cell_id})


def read_commands(commands):
    """The reader thread: interrupts are acted on here and now; runs wait for the main thread."""
    while True:
        header = read_exact(HEADER.size)
        if header is None:
            os._exit(0)  # the server is gone
        length, kind = HEADER.unpack(header)
        payload = read_exact(length)
        if payload is None:
            os._exit(0)
        if kind != MESSAGE:
            continue
        message = json.loads(payload)
        if message.get("type") == "interrupt":
            request_interrupt(message.get("id"))
        else:
            commands.put(message)


def main():
    os.set_blocking(CONTROL_FD, True)
    os.set_inheritable(CONTROL_FD, False)  # the cell's subprocesses must not write into the channel
    sys.argv = [""]
    sys.modules["__main__"] = _user_module
    sys.meta_path.insert(0, _SandboxImports())
    builtins.display = display
    capture_output()
    commands = queue.Queue()
    # Helper threads never take SIGINT: it is for the main thread, which runs the cells.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    threading.Thread(target=read_commands, args=(commands,), daemon=True, name="sandbox-commands").start()
    threading.Thread(target=forward_output_forever, daemon=True, name="sandbox-output").start()
    signal.signal(signal.SIGINT, on_sigint)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    send({"type": "ready", "language": "python", "version": sys.version.split()[0], "pid": os.getpid(), "cwd": os.getcwd()})
    number = 0
    while True:
        try:
            message = commands.get()
        except KeyboardInterrupt:
            continue
        if message.get("type") == "run":
            number += 1
            serve(message["id"], message.get("code", ""), number, message.get("env"))


main()
