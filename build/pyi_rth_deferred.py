"""PyInstaller runtime hook: run PyInstaller's own runtime hooks when their module is imported.

PyInstaller runs a runtime hook for every module in the build that has one, before the entry
script, on every start: ``pyi_rth_inspect`` (imports inspect and zipfile and reads
base_library.zip's names), ``pyi_rth_pkgutil``, ``pyi_rth_multiprocessing`` (imports
multiprocessing and subprocess) and ``pyi_rth_mplconfig`` (makes a temporary matplotlib config
folder and removes it at exit). Together they cost about as much as the rest of ``--help``
(issue 28 item 4; build/README.md), for modules that most runs never import.

build/kubectl-storage.spec takes those hooks out of the build and puts this file in their place,
with their unchanged source in ``HOOKS``. Each one runs exactly once, at the first import of its
module: right after the module has run (inspect, pkgutil, multiprocessing: the hooks patch the
module), or just before it (matplotlib: the hook sets MPLCONFIGDIR, which matplotlib reads as
it starts). A run that never imports the module never pays for its hook.
"""


def _pyi_rth_deferred() -> None:
    import sys  # noqa: PLC0415 - a runtime hook keeps its names to itself

    #: module -> (hook name, hook source, "before" or "after" the module runs); the spec fills it.
    hooks: dict[str, tuple[str, str, str]] = {}  # HOOKS

    def run_hook(name: str, source: str) -> None:
        exec(compile(source, name + ".py", "exec"), {"__name__": name})

    class _HookedLoader:
        """The module's own loader; runs the hook once the module has run."""

        def __init__(self, loader: object, name: str, source: str) -> None:
            self._loader = loader
            self._hook = (name, source)

        def __getattr__(self, attr: str) -> object:  # get_source, is_package, … as before
            return getattr(self._loader, attr)

        def create_module(self, spec: object) -> object:
            return self._loader.create_module(spec)  # type: ignore[attr-defined]

        def exec_module(self, module: object) -> None:
            self._loader.exec_module(module)  # type: ignore[attr-defined]
            run_hook(*self._hook)

    class _DeferredHooks:
        """First on sys.meta_path; looks only at the few names in ``hooks``."""

        @classmethod
        def find_spec(cls, fullname: str, path: object = None, target: object = None) -> object:
            if fullname not in hooks:
                return None
            name, source, when = hooks.pop(fullname)
            if not hooks:
                sys.meta_path.remove(cls)
            if when == "before":
                run_hook(name, source)
                return None  # the regular finders import the module
            for finder in sys.meta_path:
                if finder is cls or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None:
                        spec.loader = _HookedLoader(spec.loader, name, source)
                    return spec
            return None

    for module in [m for m in hooks if m in sys.modules]:  # imported already: run it now
        name, source, _ = hooks.pop(module)
        run_hook(name, source)
    if hooks:
        sys.meta_path.insert(0, _DeferredHooks)  # type: ignore[arg-type]


_pyi_rth_deferred()
del _pyi_rth_deferred
