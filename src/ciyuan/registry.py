"""One registry of component types: the ``"type"`` name in a component's ``to_dict()`` -> its class.

Every pipeline stage (normalizers, pre-tokenizers, models, trainers, post-processors, decoders)
keeps one :class:`Registry` in its ``base.py``; each component class registers itself with the
``@REGISTRY.register`` decorator and names its type in ``type_name``. The stage's ``from_dict``
is then the registry's: it looks the type up and calls that class's ``from_dict``. A new
component needs no dispatch code anywhere else.

Example:
    >>> from ciyuan.registry import Registry
    >>> shapes = Registry("shape")
    >>> @shapes.register
    ... class Square:
    ...     type_name = "Square"
    ...     def __init__(self, side): self.side = side
    ...     def to_dict(self): return {"type": self.type_name, "side": self.side}
    ...     @classmethod
    ...     def from_dict(cls, data): return cls(data["side"])
    >>> shapes.from_dict({"type": "Square", "side": 2}).side
    2
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Generic, List, Mapping, Tuple, Type, TypeVar, cast

from ciyuan.errors import ModelError

__all__ = ["Registry", "Component"]

T = TypeVar("T")
C = TypeVar("C", bound=type)


class Registry(Generic[T]):
    """``type_name`` -> class for the components of one pipeline stage."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self._classes: Dict[str, Type[Any]] = {}

    def register(self, cls: C) -> C:
        """Class decorator: make ``cls`` loadable by :meth:`from_dict` under ``cls.type_name``."""
        name = getattr(cls, "type_name", "")
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.__name__} needs a non-empty class attribute type_name to be registered")
        if self._classes.get(name, cls) is not cls:
            raise TypeError(f"two {self.stage} classes claim the type name {name!r}")
        self._classes[name] = cls
        return cls

    def names(self) -> List[str]:
        """The registered type names, sorted."""
        return sorted(self._classes)

    def get(self, name: str) -> Type[T]:
        """The class registered as ``name``; :class:`~ciyuan.errors.ModelError` if there is none."""
        cls = self._classes.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ModelError(f"unknown {self.stage} type {name!r}; expected one of {', '.join(self.names())}")
        return cast(Type[T], cls)

    def from_dict(self, data: Mapping[str, Any]) -> T:
        """Rebuild a component from its ``to_dict()`` form.

        Raises:
            ModelError: ``data`` is not a mapping, or its ``"type"`` is not registered.
        """
        if not isinstance(data, Mapping):
            raise ModelError(f"a {self.stage} description must be a mapping with a 'type', not {type(data).__name__}")
        cls = self.get(data.get("type"))  # type: ignore[arg-type]
        # getattr: a registered class has from_dict, but Type[T] cannot say so.
        build: Callable[[Mapping[str, Any]], T] = getattr(cls, "from_dict")  # noqa: B009
        return build(data)


class Component:
    """What the components of every stage share: a ``type_name``, a plain-data form and
    equality by that form.

    ``options`` names the constructor's keyword arguments, which the component keeps as
    attributes of the same names: :meth:`to_dict` lists them after ``"type"`` and
    :meth:`from_dict` passes them back (a missing one takes its default), so a component only
    names its options. One whose form differs overrides both.
    """

    type_name: str = ""
    options: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        """Plain data with the ``"type"`` key (read back by the stage's ``from_dict``)."""
        return {"type": self.type_name, **{name: getattr(self, name) for name in self.options}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """Rebuild from :meth:`to_dict`."""
        return cls(**{name: data[name] for name in cls.options if name in data})

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.options)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]
