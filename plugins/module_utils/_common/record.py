# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Value types without ``dataclasses``: the same declarations, none of the import-time cost.

Stdlib only, Python >= 3.9. A module that runs on every probe pays for each ``@dataclass``
when it is imported (the class body is generated and compiled; about 1 ms a class on a small
node, 30-40 ms for the engine). :class:`Record` reads the annotated fields once per class and
shares one ``__init__``/``__eq__``/``__repr__``::

    class Block(Record, frozen=True):
        numa_affinity: List[int]
        size: int = 0
        tags: Dict[str, str] = factory(dict)

Fields are the annotated names of the class and its bases in order; a field with a value has
that default (``factory(f)`` calls ``f`` for each instance). ``frozen=True`` forbids assignment
and makes instances hashable, as with ``@dataclass(frozen=True)``; :func:`replace` is
``dataclasses.replace``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

__all__ = ["Record", "factory", "replace"]

_MISSING = object()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def factory(make: Callable[[], Any]) -> Any:
    """A default made fresh for each instance (``field(default_factory=make)``)."""
    return _Factory(make)


class Record:
    """Base of the engine's value types (see the module docstring)."""

    _fields: Tuple[str, ...] = ()
    _defaults: Dict[str, Any] = {}
    _frozen = False

    def __init_subclass__(cls, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults)
        for name in cls.__dict__.get("__annotations__", {}):
            if name.startswith("_"):
                continue
            if name not in fields:
                fields.append(name)
            value = cls.__dict__.get(name, _MISSING)
            if value is not _MISSING:
                defaults[name] = value
        cls._fields = tuple(fields)
        cls._defaults = defaults
        cls._frozen = frozen
        # Like dataclasses: frozen records hash by value, mutable ones are unhashable.
        cls.__hash__ = Record._hash if frozen else None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError("%s takes %d arguments, got %d" % (type(self).__name__, len(fields), len(args)))
        values = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError("%s got an unexpected or repeated argument %r" % (type(self).__name__, name))
            values[name] = value
        for name in fields:
            if name not in values:
                default = self._defaults.get(name, _MISSING)
                if default is _MISSING:
                    raise TypeError("%s is missing the argument %r" % (type(self).__name__, name))
                values[name] = default.make() if isinstance(default, _Factory) else default
            object.__setattr__(self, name, values[name])

    def _values(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def _hash(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % (name, getattr(self, name)) for name in self._fields))

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise AttributeError("cannot assign to field %r of frozen %s" % (name, type(self).__name__))
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self._frozen:
            raise AttributeError("cannot delete field %r of frozen %s" % (name, type(self).__name__))
        object.__delattr__(self, name)


def replace(record: Any, **changes: Any) -> Any:
    """A copy of ``record`` with ``changes`` (``dataclasses.replace``)."""
    values = {name: getattr(record, name) for name in record._fields}
    values.update(changes)
    return type(record)(**values)
