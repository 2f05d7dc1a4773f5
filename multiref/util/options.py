"""Options declared once: a dataclass field carries its command-line flag.

A job's options are frozen dataclasses (the configs the card records). A field that the
user can set is made with :func:`option`, which keeps the default on the field and puts the
rest (flag name, help, choices, metavar, bounds) in the field's metadata; a field holding
another options dataclass is made with :func:`group`. Everything else is derived:

- :func:`add_arguments` adds the argparse flags (to the ``multiref`` command's parser, or to
  Beam's parser from a ``PipelineOptions`` subclass's ``_add_argparse_args``);
- :func:`from_args` builds the dataclass from the parsed flags (argparse's result or a Beam
  options view): the command line calls it once, at the top, and hands the config down;
- :func:`recorded` gives the options as the card records them, :func:`from_recorded` the
  config of recorded options (checked as the parser checks their flags: rebuilding a release
  from its ids file or card), and :func:`to_argv` the flags that give recorded options back;
- :func:`declared` lists each flag with its default, help and the fields it sets, for the
  docs (``docs/cli.md``).

The flag's type follows the default: ``bool`` is a switch (``--x/--no-x`` when the default
is true or ``negatable=True``, else ``--x``; with ``inverse=True``, a ``--x`` that sets the
field to the opposite of its default, as ``--keep-deleted-later`` would for
``drop_deleted_later``); ``int``/``float`` parse as such; a tuple default takes that many
values (``nargs``), or one or more of ``choices``; ``repeat=True`` makes a repeatable flag
(not given: the field's default), ``extend=True`` one that takes one or more values each
time (argparse's ``extend``); ``aliases`` are further spellings (``-r``), ``exclusive``
names a set of switches of which at most one may be given (``--paired-bs``/``--paired-ar``),
and ``negatable=True`` on a None default makes a ``--x/--no-x`` switch whose absence leaves
None (the library's own default); ``index=i`` makes the field the i-th value of a flag that
several fields share (``--split-fractions TRAIN VALIDATION TEST``). One flag may serve
several fields (``--testset-seed``): it is added once, and they must agree on the
default. Standard library only: the ``multiref`` CLI imports this for ``--help``.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

_KEY = "multiref.option"


@dataclass(frozen=True)
class Option:
    """The command-line side of one field (see :func:`option`)."""

    flag: str
    help: str | None
    choices: Any = None
    metavar: Any = None
    low: float | None = None
    high: float | None = None
    repeat: bool = False
    negatable: bool = False
    inverse: bool = False
    index: int | None = None
    parse: Callable | None = None
    convert: Callable | None = None
    group: type | None = None
    title: str = ""
    card: str = ""
    required: bool = False
    show_default: bool = True
    aliases: tuple = ()
    extend: bool = False
    exclusive: str = ""

    @property
    def dest(self) -> str:
        """The attribute of the parsed values: the flag's name (``--vocab-size`` -> ``vocab_size``)."""
        return self.flag.lstrip("-").replace("-", "_")


def option(default, *, flag: str, help: str | None, choices=None, metavar=None, low=None, high=None,  # noqa: A002
           repeat: bool = False, negatable: bool = False, inverse: bool = False, index: int | None = None,
           parse: Callable | None = None, convert: Callable | None = None, title: str = "", card: str = "",
           required: bool = False, show_default: bool = True, aliases: tuple = (), extend: bool = False,
           exclusive: str = ""):
    """A dataclass field settable by ``flag``; ``default`` is the field's (and the flag's) default.

    ``help``: the ``--help`` text (``(default: ...)`` is appended unless it mentions the
    default; None: no help text at all); ``choices``: allowed values (a list, or a container
    that lists its names only when iterated, as the plug-in tokenizers do); ``required``: the
    flag must be given (the field's default is for Python callers that set it themselves);
    ``show_default=False``: no ``(default: ...)`` appended to the help; ``low``/``high``: bounds of a number, checked by
    the parser (a usage error, exit 2); ``parse``: an argparse ``type`` replacing the one the
    default implies; ``convert``: applied to the parsed value (``None`` too) before it becomes
    the field's (its ValueError is the user's mistake: name the flag in it); ``title``: the
    ``--help`` section of the flag; ``card``: the field's name in :func:`recorded` (default:
    its own); ``aliases``: other spellings too (``-H``, ``-i``); ``exclusive``: the name of a group of
    flags of which at most one may be given (exactly one when every one of them is ``required``);
    ``repeat``, ``extend``, ``negatable``, ``inverse``, ``index``: see the module.
    """
    if isinstance(choices, (list, tuple, set, frozenset)):
        choices = tuple(choices) or None
    meta = Option(flag=flag, help=help, choices=choices, metavar=metavar, low=low,
                  high=high, repeat=repeat, negatable=negatable, inverse=inverse, index=index, parse=parse,
                  convert=convert, title=title, card=card, required=required,
                  show_default=show_default, aliases=tuple(aliases), extend=extend, exclusive=exclusive)
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"{flag}: a mutable default; use a tuple")
    if extend:
        meta = dataclasses.replace(meta, repeat=True)
    return dataclasses.field(default=default, metadata={_KEY: meta})


def group(cls: type, title: str = "", card: str = ""):
    """A field holding the options dataclass ``cls`` (its flags go under ``title`` in
    ``--help``; ``card``: its name in :func:`recorded`)."""
    return dataclasses.field(default_factory=cls,
                             metadata={_KEY: Option(flag="", help="", group=cls, title=title, card=card)})


def options_of(cls: type) -> list:
    """``[(field, Option)]`` of the fields of ``cls`` that carry an option or a group, in order."""
    return [(f, f.metadata[_KEY]) for f in dataclasses.fields(cls) if _KEY in f.metadata]


def _number(value) -> str:
    """A bound or a value in a usage error: an int as it is, a float as ``:g`` shows it."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f"from {_number(low)} to {_number(high)}"
    return f"at least {_number(low)}" if low is not None else f"at most {_number(high)}"


def number_type(kind: type, low=None, high=None):
    """An argparse ``type``: a finite ``kind`` (int or float) number within the bounds (either may
    be None), else a usage error (exit 2) saying what was expected, before any file is read."""
    what = "an integer" if kind is int else "a number"
    where = "" if (low, high) == (None, None) else " " + _bounds(low, high)

    def parse(text: str):
        try:
            value = kind(text)
        except (ValueError, OverflowError):  # also an integer too long to convert
            raise argparse.ArgumentTypeError(f"expected {what}{where}, got {text[:20]!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected a finite number{where}, got {text[:20]!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {_bounds(low, high)}, got {_number(value)}")
        return value

    return parse


def count_or_auto(value, flag: str, maximum: int | None = None) -> int | None:
    """An ``N|auto`` flag's value (``--num-shards``, ``--workers``): None for ``auto`` (any
    case, surrounding spaces ignored), else N written in ASCII digits, from 1 to ``maximum``
    (None: no bound); anything else (``0``, ``+5``, ``1_0``, ``²``) a UserError naming ``flag``."""
    from multiref.util.errors import UserError

    text = str(value).strip().lower()
    if text == "auto":
        return None
    n = int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else 0  # no 4,300-digit int()
    if n < 1 or (maximum is not None and n > maximum):
        expected = f"an integer from 1 to {maximum}" if maximum is not None else "a positive integer"
        raise UserError(f"{flag} must be 'auto' or {expected}, got {str(value)[:40]!r}")
    return n


def _value_type(opt: Option, sample):
    if opt.parse is not None:
        return opt.parse
    kind = type(sample)
    if kind in (int, float):
        return number_type(kind, opt.low, opt.high)  # finite always: no nan, inf or 4,300-digit int
    return None


def _argument(opt: Option, default, shared: list) -> dict:
    """``add_argument``'s keywords for ``opt`` (``shared``: the defaults of an indexed flag)."""
    kw = {"dest": opt.dest, "metavar": opt.metavar, "choices": opt.choices}
    if isinstance(default, bool) and opt.inverse:
        kw.update(default=False, action="store_true", metavar=None)
    elif isinstance(default, bool) or (default is None and opt.negatable):
        positive = default or opt.negatable
        kw.update(default=default, action=argparse.BooleanOptionalAction if positive else "store_true", metavar=None)
    elif opt.index is not None:
        kw.update(nargs=len(shared), default=list(shared), type=_value_type(opt, shared[0]))
    elif isinstance(default, tuple) and default and not opt.repeat and not opt.choices:
        kw.update(nargs=len(default), default=list(default), type=_value_type(opt, default[0]))
    elif isinstance(default, tuple):  # a list of choices, one or more values (default ()), or a repeatable flag
        kw.update(nargs="+" if opt.extend or not opt.repeat else None, default=None if opt.repeat else list(default),
                  action="extend" if opt.extend else "append" if opt.repeat else "store",
                  type=_value_type(opt, (default or ("",))[0]))
    else:
        kw.update(default=default, type=_value_type(opt, default))
    shown = opt.help is not None and opt.show_default and not (kw["default"] in (None, []) or isinstance(default, bool)) and \
        "default" not in opt.help
    kw["help"] = f"{opt.help} (default: %(default)s)".strip() if shown else opt.help
    return {k: v for k, v in kw.items() if v is not None or k == "default"}


class Declared(NamedTuple):
    """One declared option: its :class:`Option`, default, ``--help`` section, and the class
    and field that declare it."""

    opt: Option
    default: Any
    title: str
    owner: type
    field: str


def _declarations(classes) -> list:
    """``[Declared]`` of ``classes`` and their groups, depth first, in field order."""
    out = []
    for cls in classes:
        for f, opt in options_of(cls):
            if opt.group is not None:
                out += [d._replace(title=d.title or opt.title) for d in _declarations([opt.group])]
            else:
                out.append(Declared(opt, f.default, opt.title, cls, f.name))
    return out


def add_arguments(parser, *classes, required: tuple = (), skip: tuple = ()) -> None:
    """Add the flags of the option dataclasses ``classes`` to ``parser`` (argparse, or Beam's);
    the flags named in ``required`` must be given; those in ``skip`` are left out (a command
    that sets those fields its own way passes them to :func:`from_args` as ``given``).

    A flag already on the parser is left alone: another job (Beam parses every options class
    with one parser) or another field of the same flag added it. TypeError when two fields
    of one flag disagree on its default. Each flag's argparse action keeps the class that
    declares it as ``declared_by`` (so the docs and checks read the default from the
    declaration: :func:`multiref_cli.flags.command_defaults`).
    """
    decls = [d for d in _declarations(classes) if d.opt.flag not in skip]
    defaults, groups = {}, {}
    for d in decls:
        if d.opt.index is not None:
            defaults.setdefault(d.opt.flag, {})[d.opt.index] = d
        elif defaults.setdefault(d.opt.flag, d.default) != d.default:
            raise TypeError(f"{d.opt.flag}: two fields give it different defaults")
    for opt, default, title, owner, _field in decls:
        if opt.flag in getattr(parser, "_option_string_actions", {}):
            continue
        parts = [p for _i, p in sorted(defaults[opt.flag].items())] if opt.index is not None else []
        kw = _argument(opt, default, [p.default for p in parts])
        if parts and opt.metavar is None:
            kw["metavar"] = tuple(p.field.upper() for p in parts)
        if title and title not in groups:
            groups[title] = parser.add_argument_group(title)
        where, must = groups.get(title, parser), opt.required or opt.flag in required
        if opt.exclusive:
            where, must = _exclusive(where, opt.exclusive, [d.opt for d in decls], required), False
        action = where.add_argument(opt.flag, *opt.aliases, required=must, **kw)
        action.declared_by = owner  # the class whose field declares the flag (multiref_cli.flags reads its default)


def _exclusive(where, name: str, opts: list, required: tuple):
    """The mutually exclusive group ``name`` of ``where`` (made on first use): one of its flags
    must be given when each of them is required."""
    made = getattr(where, "_multiref_exclusive", None)
    if made is None:
        made = where._multiref_exclusive = {}
    if name not in made:
        members = [o for o in opts if o.exclusive == name]
        made[name] = where.add_mutually_exclusive_group(
            required=all(o.required or o.flag in required for o in members))
    return made[name]


def check_values(config) -> None:
    """The parser's checks for a config built in Python: a ValueError naming the flag when a
    field of ``config`` (its groups check themselves) is outside its declared choices or bounds."""
    for f, opt in options_of(type(config)):
        value = getattr(config, f.name)
        if opt.group is not None or value is None or isinstance(value, bool):
            continue
        for v in value if isinstance(value, tuple) else (value,):
            if opt.choices is not None and v not in opt.choices:
                raise ValueError(f"{opt.flag}: {v!r} is not one of: {', '.join(map(str, opt.choices))}")
            low, high = opt.low, opt.high
            if isinstance(v, (int, float)) and ((low is not None and v < low) or (high is not None and v > high)):
                raise ValueError(f"{opt.flag}: must be {_bounds(low, high)}, got {_number(v)}")


def default_of(cls: type, name: str):
    """The declared default of the field ``name`` of the options dataclass ``cls``."""
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def type_of(cls: type, name: str):
    """The argparse ``type`` of the field ``name`` of ``cls``, its bounds included, for a command
    that declares the field under a flag of its own (see ``skip`` of :func:`add_arguments`)."""
    field, opt = next((f, o) for f, o in options_of(cls) if f.name == name)
    return _value_type(opt, field.default) or type(field.default)


def from_args(cls: type, parsed, **given):
    """The ``cls`` instance of the ``parsed`` flags (argparse's result or a Beam options view).

    Fields without an option keep their default unless named in ``given``; a repeatable flag
    not given means the field's default. ValueError (the user's mistake) from the dataclass's
    own checks or a ``convert``.
    """
    kwargs = {}
    for f, opt in options_of(cls):
        if f.name in given:
            continue
        if opt.group is not None:
            kwargs[f.name] = from_args(opt.group, parsed)
            continue
        value = getattr(parsed, opt.dest)
        if opt.index is not None:
            value = value[opt.index]
        elif value is None and opt.repeat:
            value = f.default
        elif isinstance(value, list):
            value = tuple(value)
        elif opt.inverse:
            value = not value
        kwargs[f.name] = opt.convert(value) if opt.convert is not None else value
    return cls(**kwargs, **given)


def recorded(config) -> dict:
    """The options an options dataclass records in a card: every field, in declared order,
    under its ``card`` name; a group as a nested dict; tuples as lists (JSON-friendly)."""
    out = {}
    for f in dataclasses.fields(config):
        opt = f.metadata.get(_KEY)
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            value = recorded(value)
        out[(opt.card if opt else "") or f.name] = list(value) if isinstance(value, tuple) else value
    return out


def _tokens(value) -> list:
    return [repr(v) if isinstance(v, float) else str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def _flag_tokens(opt: Option, default, value) -> list:
    """The command-line tokens that set a field declared by ``opt`` to ``value``."""
    if isinstance(default, bool) or (default is None and opt.negatable and isinstance(value, bool)):
        if opt.inverse:
            return [opt.flag] if value != default else []
        if default or opt.negatable:
            return [opt.flag if value else f"--no-{opt.flag[2:]}"]
        return [opt.flag] if value else []
    if value is None or value == [] or value == ():
        return []
    if opt.repeat:
        return [t for v in value for t in (opt.flag, *_tokens(v))]
    return [opt.flag, *_tokens(value)]


def to_argv(cls: type, options: dict) -> tuple[list, set]:
    """The flags that give the fields of ``cls`` the ``options`` a card recorded
    (:func:`recorded`'s dict): the inverse of :func:`from_args`. Returns ``(argv, names)``:
    ``names`` are the recorded options the flags set (the others have no flag)."""
    argv, names, indexed = [], set(), {}
    for f, opt in options_of(cls):
        name = opt.card or f.name
        if name not in options:
            continue
        names.add(name)
        if opt.group is not None:
            argv += to_argv(opt.group, options[name])[0]
        elif opt.index is not None:
            indexed.setdefault(opt.flag, {})[opt.index] = options[name]
        else:
            argv += _flag_tokens(opt, f.default, options[name])
    for flag, parts in indexed.items():
        argv += [flag, *_tokens([v for _i, v in sorted(parts.items())])]
    return argv, names


def from_recorded(cls: type, options: dict, **given):
    """The ``cls`` instance whose :func:`recorded` options are ``options`` (a card's, an ids
    file's): the inverse of :func:`recorded` for the fields that have a flag, checked as the
    parser checks the flags :func:`to_argv` gives (the flag's type and bounds, its choices, with
    argparse's words: ``argument --vocab-size: ...``), then by ``convert`` and the dataclass's own
    checks, then that the config records ``options`` back. Fields without a flag, and those
    ``options`` does not name, keep their default unless named in ``given``. ValueError (the
    mistake is the file's: the caller names it) otherwise."""
    fields = [(f, opt) for f, opt in options_of(cls) if f.name not in given and (opt.card or f.name) in options]
    kwargs, extra = {}, []
    for f, opt in fields:
        value = options[opt.card or f.name]
        if opt.group is not None:
            if not isinstance(value, dict):
                raise ValueError(f"{opt.card or f.name}: expected an object of options, got {type(value).__name__}")
            kwargs[f.name] = from_recorded(opt.group, value)
        else:
            kwargs[f.name], more = _recorded_value(opt, f.default, value)
            extra += more
    if extra:  # a list where the flag takes one value: the words argparse has for the tokens left over
        raise ValueError(f"unrecognized arguments: {' '.join(extra)}")
    for f, opt in fields:
        if opt.group is None and opt.convert is not None and not isinstance(kwargs[f.name], _NotAList):
            kwargs[f.name] = opt.convert(kwargs[f.name])
    wrong = [kwargs.pop(name) for name, value in list(kwargs.items()) if isinstance(value, _NotAList)]
    config = cls(**kwargs, **given)
    if wrong:
        raise ValueError(wrong[0])
    back = recorded(config)
    for f, opt in fields:
        name = opt.card or f.name
        if opt.group is None and back[name] != options[name]:
            raise ValueError(f"{name}: {_json(options[name])} is not a value of {_action_name(opt, f.default)} "
                             f"(it would be recorded as {_json(back[name])})")
    return config


class _NotAList(str):
    """A repeatable flag's recorded value that is no list: the error, raised after the parser's and
    the dataclass's checks of the other values (the field keeps its default meanwhile)."""


def _json(value) -> str:
    import json

    return json.dumps(value)[:60]


def _action_name(opt: Option, default) -> str:
    """The flag as argparse names it in an error (``--lowercase/--no-lowercase``, ``-r/--references``)."""
    switch = isinstance(default, bool) or (default is None and opt.negatable)
    if switch and (default or opt.negatable) and not opt.inverse:
        return f"{opt.flag}/--no-{opt.flag[2:]}"
    return "/".join((opt.flag, *opt.aliases))


def _recorded_value(opt: Option, default, value) -> tuple:
    """``(field value, tokens left over)`` of one recorded ``value``: what the parser makes of
    the tokens :func:`_flag_tokens` gives (a switch takes the value's truth, a flag not given
    the default)."""
    if isinstance(default, bool):
        on = bool(value)
        return ((not default) if on != default else default) if opt.inverse else on, []
    if default is None and opt.negatable and (value is None or isinstance(value, bool)):
        return value, []
    if opt.repeat:
        if not isinstance(value, (list, tuple)):  # refused after the values the parser would have read
            return _NotAList(f"argument {_action_name(opt, default)}: expected a list, got {_json(value)}"), []
        sample = (default or ("",))[0]
        return (tuple(_parsed(opt, sample, t) for t in _tokens(value)) if value else default), []
    tokens = [] if value is None else _tokens(value)
    if not tokens:
        return default, []
    if isinstance(default, tuple) and opt.index is None:  # nargs N (a tuple default), or "+" (choices)
        n = len(default) if default and not opt.choices else len(tokens)
        if len(tokens) < n:
            raise ValueError(f"argument {_action_name(opt, default)}: expected {n} arguments")
        return tuple(_parsed(opt, (default or ("",))[0], t) for t in tokens[:n]), tokens[n:]
    sample = default[0] if isinstance(default, tuple) and default else default
    return _parsed(opt, sample, tokens[0]), tokens[1:]


def _parsed(opt: Option, sample, text: str):
    """``text`` through the flag's type and choices, as argparse checks it (its error words)."""
    action = argparse.Action([opt.flag, *opt.aliases], opt.dest, choices=opt.choices)
    kind = _value_type(opt, sample)
    try:
        value = kind(text) if kind is not None else text
        argparse.ArgumentParser(add_help=False)._check_value(action, value)  # argparse's words for a choice
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(argparse.ArgumentError(action, str(exc)))) from None
    except argparse.ArgumentError as exc:
        raise ValueError(str(exc)) from None
    except (TypeError, ValueError):
        name = getattr(kind, "__name__", repr(kind))
        raise ValueError(str(argparse.ArgumentError(action, f"invalid {name} value: {text!r}"))) from None
    return value


def shown(default) -> str:
    """A default as the docs show it (``yes``/``no``, ``-`` for none, a tuple's values)."""
    if isinstance(default, bool):
        return "yes" if default else "no"
    if isinstance(default, (tuple, list)):
        return " ".join(str(v) for v in default) or "-"
    return "-" if default is None else str(default)


def declared(*classes) -> list:
    """``[(flag, default, help, fields)]`` of ``classes`` for the docs: each flag once, in the
    order ``--help`` shows them (a switch that can be turned off as ``--x/--no-x``);
    ``default`` as text; ``help`` with the choices; ``fields``: the ``Class.field`` it sets."""
    rows = {}
    for opt, default, _title, owner, field in _declarations(classes):
        if opt.flag not in rows:
            switch = isinstance(default, bool) or (default is None and opt.negatable)
            off = switch and (default or opt.negatable) and not opt.inverse
            text = f"{opt.help or ''}; one of: {', '.join(map(str, opt.choices))}" if opt.choices else opt.help or ""
            rows[opt.flag] = {"flag": f"{opt.flag}/--no-{opt.flag[2:]}" if off else opt.flag,
                              "help": text.lstrip("; "), "defaults": {}, "fields": []}
        rows[opt.flag]["defaults"][opt.index or 0] = (not default) if opt.inverse else default  # as the flag shows it
        rows[opt.flag]["fields"].append(f"{owner.__name__}.{field}")
    out = []
    for row in rows.values():
        values = [v for _i, v in sorted(row["defaults"].items())]
        out.append((row["flag"], shown(tuple(values) if len(values) > 1 else values[0]), row["help"], row["fields"]))
    return out
