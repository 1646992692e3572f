"""Opt-in for unmodified tf2_ros Python nodes: with ``TF_SHM_TF2_ROS=1``, tf2_ros's ``Buffer``
and ``TransformListener`` are tf_shm's.

``tf_shm_tf2_ros.pth`` (installed by the wheel next to the ``tf_shm`` package) calls
:func:`install` at interpreter start-up when ``TF_SHM_TF2_ROS=1``; ``python3 -m tf_shm.run``
calls it for one script or module whatever the variable says. :func:`install` only puts a finder
on ``sys.meta_path``: nothing is imported until the process imports tf2_ros. Right after
tf2_ros's package has run (every import form of tf2_ros runs it first), these attributes are
replaced by tf_shm's classes:

* ``tf2_ros.Buffer`` and ``tf2_ros.buffer.Buffer`` by ``tf_shm.Buffer``;
* ``tf2_ros.TransformListener`` and ``tf2_ros.transform_listener.TransformListener`` by
  ``tf_shm.TransformListener`` (no /tf or /tf_static subscription: the bridge listens);
* ``StaticTransformListener``, where tf2_ros defines one (Jazzy's Python tf2_ros does not), by
  ``tf_shm.StaticTransformListener``.

Everything else (broadcasters, exceptions, ``BufferInterface``, ``BufferClient``, tf2_py's
names) stays tf2_ros's own. Nothing is changed on disk, and without the variable this module is
not even imported.

If tf_shm cannot be imported (a wheel built for another Python, a broken native module), one
warning is logged through rclpy's logger ``tf_shm`` (rcutils format on stderr and in the ROS
log file; Python's ``warnings`` where rclpy is missing) and tf2_ros is left untouched, so the
node runs on tf2_ros's own listener.

This file is a top-level module, not part of the ``tf_shm`` package, so that start-up costs one
small import and never loads tf_shm's native module in processes that do not use tf2_ros.
"""

import sys
import threading

ENV = "TF_SHM_TF2_ROS"
_WATCHED = ("tf2_ros", "tf_shm")

_lock = threading.RLock()
_loading = set()  # names of _WATCHED whose module is executing right now
_state = {"installed": False, "attempted": False, "patched": False, "error": None}
# (module name, attribute) -> tf2_ros's own object, for every attribute replaced.
originals = {}


def install():
    """Puts the finder on ``sys.meta_path`` (once); patches at once if tf2_ros is already
    imported."""
    with _lock:
        if not _state["installed"]:
            sys.meta_path.insert(0, _Finder())
            _state["installed"] = True
    _maybe_patch()


def status():
    """What the hook did: ``{"installed", "attempted", "patched", "error"}`` (error: the text of
    the exception that kept tf_shm from loading, else None)."""
    return dict(_state)


class _Finder:
    """Finds tf2_ros and tf_shm as the rest of ``sys.meta_path`` would, with a loader that
    tells :func:`_maybe_patch` when their module has run."""

    def find_spec(self, name, path=None, target=None):
        if name not in _WATCHED:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, name)
                return spec
        return None


class _Loader:
    """The module's own loader, with :func:`_maybe_patch` after ``exec_module``."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        with _lock:
            _loading.add(self._name)
        try:
            self._loader.exec_module(module)
        finally:
            with _lock:
                _loading.discard(self._name)
        _maybe_patch()

    def __getattr__(self, attr):
        # get_resource_reader, is_package, get_code, ...: the real loader's.
        return getattr(self._loader, attr)


def _maybe_patch():
    """Patches tf2_ros once it has run, unless tf_shm is half-imported (tf_shm importing tf2_ros
    itself): then again when tf_shm's import has finished."""
    with _lock:
        if _state["attempted"] or "tf2_ros" not in sys.modules or _loading:
            return
        _state["attempted"] = True
    try:
        import tf_shm

        replacements = {
            "Buffer": tf_shm.Buffer,
            "TransformListener": tf_shm.TransformListener,
            "StaticTransformListener": tf_shm.StaticTransformListener,
        }
    except Exception as e:  # noqa: BLE001 - any failure to load: keep tf2_ros's own
        _state["error"] = f"{type(e).__name__}: {e}"
        _warn(
            f"{ENV}=1 but the tf_shm package cannot be loaded ({_state['error']}); "
            "this process uses tf2_ros's own Buffer and TransformListener (subscribing /tf "
            "and /tf_static). Reinstall tf_shm for this Python, or unset "
            f"{ENV} to silence this."
        )
        return
    for modname in ("tf2_ros", "tf2_ros.buffer", "tf2_ros.transform_listener"):
        module = sys.modules.get(modname)
        if module is None:
            continue
        for attr, new in replacements.items():
            if hasattr(module, attr):
                originals[(modname, attr)] = getattr(module, attr)
                setattr(module, attr, new)
    _state["patched"] = True


def _warn(text):
    try:
        from rclpy.logging import get_logger

        get_logger("tf_shm").warning(text)
    except Exception:  # noqa: BLE001 - no rclpy: Python's own warning channel
        import warnings

        warnings.warn(text, RuntimeWarning, stacklevel=2)
