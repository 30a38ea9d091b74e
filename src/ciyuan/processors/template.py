"""TemplateProcessing: add a model's special tokens around one or two encoded sequences.

A template is a space-separated list of pieces, Hugging Face ``tokenizers``' syntax:

* ``$A`` / ``$B`` - the first / second sequence (``$`` alone is ``$A``; lower case works too);
* ``$0``, ``$1``, ... - the first sequence with that type id;
* anything else - a special token, looked up in ``special_tokens``;
* ``:N`` after any piece sets its type id (default 0): ``$B:1``, ``[SEP]:1``.

BERT is ``single="[CLS] $A [SEP]"``, ``pair="[CLS] $A [SEP] $B:1 [SEP]:1"``. The work per
encoding is a handful of list operations; when truncation left overflowing windows, they are
combined exactly as HF does (see :meth:`ciyuan.encoding.Encoding.merge_with`).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ciyuan.encoding import AddedTokens, Encoding, LayoutPiece
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.processors.base import PROCESSORS, PostProcessor

__all__ = ["TemplateProcessing", "SpecialTokenSpec"]

# ("[CLS]", 101), (101, "[CLS]") or {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]}
SpecialTokenSpec = Union[Tuple[str, int], Tuple[int, str], Mapping[str, Any]]
TemplateSpec = Union[str, Sequence[str]]

_U32 = 1 << 32
_NUMBER = re.compile(r"\+?[0-9]+")  # what Rust's u32 parser accepts

# A parsed piece: ("seq", 0 or 1, type_id) or ("special", name, type_id)
Piece = Tuple[str, Any, int]
# A compiled template: AddedTokens (built once) or (sequence index, type id), as Encoding.concat reads it.
_Compiled = List[Union[AddedTokens, Tuple[int, int]]]


def _parse_u32(text: str) -> Optional[int]:
    if not _NUMBER.fullmatch(text):
        return None
    value = int(text)
    return value if value < _U32 else None


def _parse_piece(text: str) -> Piece:
    fields = text.split(":")
    bad = ModelError(f"cannot read template piece {text!r}: expected $A, $B, $<type id> or a special "
                     "token, optionally followed by :<type id>")
    if len(fields) > 2:
        raise bad
    type_id = 0
    if len(fields) == 2:
        parsed = _parse_u32(fields[1])
        if parsed is None:
            raise bad
        type_id = parsed
    name = fields[0]
    if not name.startswith("$"):
        return ("special", name, type_id)
    rest = name[1:]
    if rest in ("", "A", "a"):
        piece: Piece = ("seq", 0, 0)
    elif rest in ("B", "b"):
        piece = ("seq", 1, 0)
    else:
        parsed = _parse_u32(rest)
        if parsed is None:
            raise bad
        piece = ("seq", 0, parsed)
    return piece if len(fields) == 1 else (piece[0], piece[1], type_id)


def _parse_template(spec: TemplateSpec, what: str) -> List[Piece]:
    if isinstance(spec, str):
        items: Sequence[str] = spec.split(" ")  # HF splits on single spaces: "a  b" has an empty piece
    elif isinstance(spec, (list, tuple)) and all(isinstance(p, str) for p in spec):
        items = spec
    else:
        raise ModelError(f"the {what} template must be a string or a list of strings, not {spec!r}")
    return [_parse_piece(p) for p in items]


def _piece_from_dict(data: Any) -> Piece:
    if isinstance(data, dict) and len(data) == 1:
        (kind, body), = data.items()
        if kind == "Sequence" and isinstance(body, dict) and body.get("id") in ("A", "B"):
            return ("seq", 0 if body["id"] == "A" else 1, int(body.get("type_id", 0)))
        if kind == "SpecialToken" and isinstance(body, dict) and isinstance(body.get("id"), str):
            return ("special", body["id"], int(body.get("type_id", 0)))
    if isinstance(data, str):
        return _parse_piece(data)
    raise ModelError(f"cannot read template piece {data!r}")


def _special_entry(spec: Any) -> Tuple[str, Tuple[int, ...], Tuple[str, ...]]:
    """(name, ids, tokens) of one special token given in any of HF's forms."""
    if isinstance(spec, Mapping):
        name, ids, tokens = spec.get("id"), spec.get("ids"), spec.get("tokens")
        if not isinstance(name, str) or not isinstance(ids, (list, tuple)) or not isinstance(tokens, (list, tuple)):
            raise ModelError(f"a special token needs 'id' (str), 'ids' and 'tokens' (lists), got {spec!r}")
        if len(ids) != len(tokens):
            raise ModelError(f"special token {name!r}: ids and tokens must have the same length")
    elif isinstance(spec, (tuple, list)) and len(spec) == 2:
        a, b = spec
        if isinstance(a, str) and not isinstance(b, str):
            name, ids, tokens = a, [b], [a]
        elif isinstance(b, str) and not isinstance(a, str):
            name, ids, tokens = b, [a], [b]
        else:
            raise ModelError(f"a special token is (token, id), got {spec!r}")
    else:
        raise ModelError(f"a special token is (token, id) or {{'id', 'ids', 'tokens'}}, got {spec!r}")
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < _U32:
            raise ModelError(f"special token {name!r} needs non-negative integer ids, got {i!r}")
    if not all(isinstance(t, str) for t in tokens):
        raise ModelError(f"special token {name!r}: tokens must be strings")
    return name, tuple(ids), tuple(tokens)


@PROCESSORS.register
class TemplateProcessing(PostProcessor):
    """Post-processor that places the encoded sequences and special tokens by a template.

    Args:
        single: template for one sequence (default ``"$0"``: the sequence alone).
        pair: template for two sequences (default ``"$A:0 $B:1"``); must use both $A and $B.
        special_tokens: the special tokens the templates name, as ``(token, id)`` pairs (or
            ``{"id": name, "ids": [...], "tokens": [...]}`` for a name that expands to several).

    Raises:
        ModelError: a piece cannot be read, a special token is missing, ``pair`` lacks $A or
            $B, or ``single`` uses $B.

    Example:
        >>> bert = TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        ...                           special_tokens=[("[CLS]", 101), ("[SEP]", 102)])
        >>> bert.num_special_tokens_to_add(is_pair=True)
        3
        >>> enc = bert.process(Encoding(None, ids=[7592], offsets=[(0, 5)], tokens=["hello"]))
        >>> enc.ids, enc.tokens, enc.special_tokens_mask, enc.sequence_ids
        ([101, 7592, 102], ['[CLS]', 'hello', '[SEP]'], [1, 0, 1], [None, 0, None])
    """

    type_name = "TemplateProcessing"

    def __init__(
        self,
        single: TemplateSpec = "$0",
        pair: TemplateSpec = "$A:0 $B:1",
        special_tokens: Union[Sequence[SpecialTokenSpec], Mapping[str, Any], None] = None,
    ) -> None:
        specs: Sequence[Any]
        if special_tokens is None:
            specs = []
        elif isinstance(special_tokens, Mapping):
            specs = list(special_tokens.values())  # HF's JSON form: name -> {"id", "ids", "tokens"}
        else:
            specs = list(special_tokens)
        self.special_tokens: Dict[str, Tuple[Tuple[int, ...], Tuple[str, ...]]] = {}
        for spec in specs:
            name, ids, tokens = _special_entry(spec)
            self.special_tokens[name] = (ids, tokens)
        self._init_templates(_parse_template(single, "single"), _parse_template(pair, "pair"))

    def _init_templates(self, single: List[Piece], pair: List[Piece]) -> None:
        if not ({p[1] for p in pair if p[0] == "seq"} >= {0, 1}):
            raise ModelError("the pair template must use both sequences ($A and $B)")
        if any(p[0] == "seq" and p[1] == 1 for p in single):
            # HF accepts this and fails when encoding; say so now.
            raise ModelError("the single template cannot use $B (there is no second sequence)")
        missing = sorted({p[1] for p in single + pair if p[0] == "special"} - set(self.special_tokens))
        if missing:
            raise ModelError(f"the templates use special tokens {missing!r} that are not in special_tokens "
                             f"(which has {sorted(self.special_tokens)!r})")
        self.single = single
        self.pair = pair
        self._added = (self._count(single), self._count(pair))
        self._one_sequence = sum(1 for p in single if p[0] == "seq") == 1
        # Layouts for process() (Encoding.concat's): [single, pair] x [without, with special tokens].
        self._layouts = tuple((self._without_added(c), c) for c in (self._compile(single), self._compile(pair)))

    def _count(self, template: List[Piece]) -> int:
        return sum(len(self.special_tokens[p[1]][0]) for p in template if p[0] == "special")

    def _compile(self, template: List[Piece]) -> _Compiled:
        """Each piece as :class:`AddedTokens` (built once) or ``(sequence index, type id)``."""
        out: _Compiled = []
        for kind, what, type_id in template:
            if kind == "seq":
                out.append((what, type_id))
            else:
                ids, tokens = self.special_tokens[what]
                out.append(AddedTokens(ids, tokens, type_id))
        return out

    @staticmethod
    def _without_added(layout: Sequence[LayoutPiece]) -> List[LayoutPiece]:
        return [p for p in layout if not isinstance(p, AddedTokens)]

    def single_wrapper(self, add_special_tokens: bool = True
                       ) -> Optional[Tuple[List[AddedTokens], Optional[int], List[AddedTokens]]]:
        """How the single template wraps one plain sequence: (tokens added before it, the type id
        it gets, tokens added after it); None if the template uses the sequence more than once.

        A batch encoder uses this to build each result directly, which gives the same Encoding
        as :meth:`process` on an input without overflowing windows.
        """
        template = self._layouts[0][1]
        at = [i for i, piece in enumerate(template) if not isinstance(piece, AddedTokens)]
        if len(at) != 1:
            return None
        added = (lambda pieces: list(pieces)) if add_special_tokens else (lambda pieces: [])
        return added(template[:at[0]]), template[at[0]][1], added(template[at[0] + 1:])  # type: ignore[index]

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens the template adds to one sequence (or a pair)."""
        return self._added[1 if is_pair else 0]

    def process(self, encoding: Encoding, pair: Optional[Encoding] = None,
                add_special_tokens: bool = True) -> Encoding:
        """Apply the template to one encoding (or a pair) and return the combined Encoding.

        As in HF, each input gets type id = its index (0, 1) and sequence id = its index; each
        ``$`` piece then sets its template type id on the main tokens (overflowing windows keep
        the index). Inputs are not changed.
        """
        inputs = [encoding] if pair is None else [encoding, pair]
        template = self._layouts[0 if pair is None else 1][1]
        try:
            plain = not encoding.has_overflowing and (pair is None or not pair.has_overflowing)
        except AttributeError:
            bad = encoding if not isinstance(encoding, Encoding) else pair
            raise InvalidInputError(f"expected a ciyuan Encoding, not {type(bad).__name__}") from None
        layout = self._layouts[0 if pair is None else 1][1 if add_special_tokens else 0]
        if plain:
            return Encoding.concat(layout, inputs)
        windows = encoding.overflowing
        if pair is None and self._one_sequence and not any(o.has_overflowing for o in windows):
            # One sequence in the template and plain windows: HF's merges reduce to the template
            # applied to each window, which keeps its own type ids (as the general path shows).
            result = Encoding.concat(layout, inputs)
            result.overflowing = [Encoding.concat(layout, [o], keep_types=True) for o in windows]
            return result
        # General case (overflowing windows): HF's algorithm step by step.
        nodes = []
        for index, enc in enumerate(inputs):
            node = enc.copy()
            node.set_type_id(index)
            node.set_sequence_id(index, overflowing=True)
            nodes.append(node)
        pieces: List[Encoding] = []
        for piece in template:
            if isinstance(piece, AddedTokens):
                if add_special_tokens:
                    pieces.append(piece.encoding())
                continue
            index, type_id = piece
            node = nodes[index].copy()
            node.set_type_id(type_id)
            node.set_sequence_id(index)
            pieces.append(node)
        return Encoding.merge(pieces)

    def to_dict(self) -> Dict[str, Any]:
        """HF's JSON form (so a ``tokenizer.json`` post_processor reads back unchanged)."""
        def pieces(template: List[Piece]) -> List[Dict[str, Any]]:
            return [{"Sequence": {"id": "AB"[what], "type_id": t}} if kind == "seq"
                    else {"SpecialToken": {"id": what, "type_id": t}} for kind, what, t in template]

        return {
            "type": self.type_name,
            "single": pieces(self.single),
            "pair": pieces(self.pair),
            "special_tokens": {name: {"id": name, "ids": list(ids), "tokens": list(tokens)}
                               for name, (ids, tokens) in sorted(self.special_tokens.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TemplateProcessing":
        if not isinstance(data, dict) or data.get("type") != cls.type_name:
            raise ModelError(f"not a {cls.type_name} description: {data!r}")
        self = cls.__new__(cls)
        specials = data.get("special_tokens") or {}
        self.special_tokens = {}
        for spec in (specials.values() if isinstance(specials, Mapping) else specials):
            name, ids, tokens = _special_entry(spec)
            self.special_tokens[name] = (ids, tokens)

        def template(value: Any, what: str) -> List[Piece]:
            if isinstance(value, str):
                return _parse_template(value, what)
            if not isinstance(value, list):
                raise ModelError(f"the {what} template must be a list of pieces, not {value!r}")
            return [_piece_from_dict(p) for p in value]

        self._init_templates(template(data.get("single", "$0"), "single"),
                             template(data.get("pair", "$A:0 $B:1"), "pair"))
        return self

    def _template_text(self, template: List[Piece]) -> str:
        return " ".join(("$" + "AB"[what] if kind == "seq" else what) + f":{t}" for kind, what, t in template)

    def __repr__(self) -> str:
        specials = [(n, list(ids)) for n, (ids, _) in sorted(self.special_tokens.items())]
        return (f"TemplateProcessing(single={self._template_text(self.single)!r}, "
                f"pair={self._template_text(self.pair)!r}, special_tokens={specials!r})")

