"""``Tokenizer.from_pretrained``: a model folder on disk as ``transformers`` reads it.

:func:`ciyuan.formats.folder.read_model_folder` says which file holds the tokenizer and what the
configuration says of its tokens; this module builds the tokenizer from them:

- the tokenizer file through the reader of its format;
- the special tokens the configuration names (``bos_token`` ... ``mask_token``,
  ``additional_special_tokens``, ``added_tokens_decoder``), recognised in input text as
  ``transformers`` recognises them;
- the tokens ``transformers`` adds around a text when the file itself does not say
  (``add_bos_token`` / ``add_eos_token``, and the templates of the BERT, RoBERTa, ALBERT, T5 and
  XLM-R tokenizer classes).

The module takes the ``Tokenizer`` class as an argument (as :mod:`ciyuan.training` does), so it
does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Type

from ciyuan._io import PathLike
from ciyuan.decoders import from_dict as decoder_from_dict
from ciyuan.errors import FileFormatError
from ciyuan.formats.folder import SPECIAL_TOKEN_KEYS, ModelFolder, read_model_folder
from ciyuan.formats.sentencepiece import load_sentencepiece_proto
from ciyuan.models import from_dict as model_from_dict
from ciyuan.normalizers import from_dict as normalizer_from_dict
from ciyuan.pre_tokenizers import from_dict as pre_tokenizer_from_dict
from ciyuan.processors import TemplateProcessing
from ciyuan.special_tokens import AddedToken

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["from_pretrained"]

# Tokenizer classes of transformers whose slow tokenizer adds these tokens around a text
# (single, pair), by the config's token names.
_CLASS_TEMPLATES: Dict[str, Tuple[str, str]] = {
    "Bert": ("cls_token $A sep_token", "cls_token $A sep_token $B:1 sep_token:1"),
    "Albert": ("cls_token $A sep_token", "cls_token $A sep_token $B:1 sep_token:1"),
    "Roberta": ("bos_token $A eos_token", "bos_token $A eos_token eos_token $B eos_token"),
    "XLMRoberta": ("bos_token $A eos_token", "bos_token $A eos_token eos_token $B eos_token"),
    "T5": ("$A eos_token", "$A eos_token $B eos_token"),
}
# Classes that add bos (and, when asked, eos) unless the config says otherwise.
_BOS_BY_DEFAULT = ("Llama", "CodeLlama", "Gemma", "Mistral")


def _class_name(folder: ModelFolder) -> str:
    """The folder's tokenizer class without "Tokenizer" (and "Fast"): "Llama", "Albert"..."""
    return folder.tokenizer_class.replace("TokenizerFast", "").replace("Tokenizer", "")


def _template(folder: ModelFolder) -> Optional[Tuple[str, str]]:
    """The single and pair templates, in token names, that the folder's class or config asks for."""
    name = _class_name(folder)
    if "add_bos_token" in folder.config or "add_eos_token" in folder.config or name in _BOS_BY_DEFAULT:
        bos = bool(folder.config.get("add_bos_token", name in _BOS_BY_DEFAULT))
        eos = bool(folder.config.get("add_eos_token", False))
        one = " ".join((["bos_token"] if bos else []) + ["$A"] + (["eos_token"] if eos else []))
        two = " ".join((["bos_token"] if bos else []) + ["$A"] + (["eos_token"] if eos else [])
                       + (["bos_token:1"] if bos else []) + ["$B:1"] + (["eos_token:1"] if eos else []))
        return (one, two) if bos or eos else None
    return _CLASS_TEMPLATES.get(name)


def _albert(cls: Type["Tokenizer"], folder: ModelFolder) -> "Tokenizer":
    """ALBERT's ``spiece.model`` as ``transformers`` (5) runs it: not SentencePiece's own
    pipeline but a Hugging Face one built around its pieces - ```` `` ```` and ``''`` made ``"``,
    accents stripped (unless ``keep_accents``), lowercased (``do_lower_case``, true by default),
    then the model's charsmap; words cut at whitespace, each given a ``▁``; Hugging Face's Unigram."""
    proto = load_sentencepiece_proto(folder.files["tokenizer"])
    config = folder.config
    steps: List[Dict[str, Any]] = [{"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
                                   {"type": "Replace", "pattern": {"String": "''"}, "content": '"'}]
    if not config.get("keep_accents", False):
        steps += [{"type": "NFKD"}, {"type": "StripAccents"}]
    if config.get("do_lower_case", True):
        steps.append({"type": "Lowercase"})
    if proto.normalizer_spec.precompiled_charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap": proto.normalizer_spec.precompiled_charsmap})
    scheme = "always" if config.get("add_prefix_space", True) else "never"
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": True}
    model = model_from_dict({"type": "Unigram", "unk_id": proto.trainer_spec.unk_id, "byte_fallback": False,
                             "vocab": [[p.piece, p.score] for p in proto.pieces]})
    # Control and user-defined pieces are Hugging Face added tokens (special and not), found in
    # the text before the model runs.
    added = {i: AddedToken(p.piece, normalized=False, special=p.type == _CONTROL)
             for i, p in enumerate(proto.pieces) if p.type in (_CONTROL, _USER_DEFINED)}
    return cls(model, normalizer=normalizer_from_dict({"type": "Sequence", "normalizers": steps}),
               pre_tokenizer=pre_tokenizer_from_dict({"type": "Sequence", "pretokenizers": [
                   {"type": "WhitespaceSplit"}, metaspace]}),
               decoder=decoder_from_dict(metaspace), added_tokens=added)


_CONTROL, _USER_DEFINED = 3, 4  # SentencePiece's piece types

# Classes whose transformers tokenizer runs a SentencePiece model through a pipeline of its own.
_SENTENCEPIECE_CONVERSIONS = {"Albert": _albert}


def _special_ids(tok: "Tokenizer", folder: ModelFolder) -> Dict[str, int]:
    """The folder's special tokens with their ids: from ``added_tokens_decoder`` when it fixes
    them, else from the model's vocabulary."""
    by_text = {t.content: i for i, t in folder.added.items() if t.special}
    wanted: List[str] = [t.content for t in folder.special.values()] + [t.content for t in folder.additional]
    ids: Dict[str, int] = {}
    for text in wanted + list(by_text):
        if text in ids:
            continue
        token_id = by_text.get(text)
        if token_id is None:
            token_id = tok.special_tokens.get(text)
        if token_id is None:
            token_id = tok.token_to_id(text)
        if token_id is None:
            raise FileFormatError(str(folder.path), None, f"the special token {text!r} is neither in "
                                  "added_tokens_decoder nor in the vocabulary")
        ids[text] = token_id
    return ids


def from_pretrained(cls: Type["Tokenizer"], path: PathLike, **options: Any) -> "Tokenizer":
    """Read the model folder ``path`` (see :meth:`ciyuan.Tokenizer.from_pretrained`)."""
    folder = read_model_folder(path)
    first = folder.files["tokenizer"]
    if folder.kind == "tokenizer.json":
        return cls.from_file(first)  # the file holds its added tokens and post-processor
    if folder.kind == "gpt2":
        tok = cls.from_gpt2(first, folder.files["merges"])
    elif folder.kind == "bert_vocab":
        config = folder.config
        names = {k: folder.special_content(k) for k in ("unk_token", "sep_token", "cls_token", "pad_token",
                                                       "mask_token")}
        tok = cls.from_bert_vocab(first, lowercase=bool(config.get("do_lower_case", True)),
                                  strip_accents=config.get("strip_accents"),
                                  handle_chinese_chars=bool(config.get("tokenize_chinese_chars", True)),
                                  **{k: v for k, v in names.items() if v is not None})
    elif folder.kind == "tiktoken":
        tok = cls.from_tiktoken(first, **{k: v for k, v in options.items() if k in ("pattern", "special_tokens")})
    elif folder.kind == "sentencepiece" and _class_name(folder) in _SENTENCEPIECE_CONVERSIONS:
        tok = _SENTENCEPIECE_CONVERSIONS[_class_name(folder)](cls, folder)
    else:
        tok = cls.from_file(first)
    specials = _special_ids(tok, folder)
    merged = dict(tok.special_tokens)
    if folder.kind == "tiktoken":
        # The config's tokens replace the named encoding's on the ids they fix (Llama 3.1 and
        # 3.2 ship Llama 3's file and rename reserved slots: 128008 is <|eom_id|>).
        taken = set(specials.values())
        merged = {t: i for t, i in merged.items() if i not in taken}
    merged.update(specials)
    template = _template(folder)
    post_processor = tok.post_processor
    if template is not None and folder.kind != "bert_vocab":
        def spelled(spec: str) -> str:
            out = []
            for item in spec.split(" "):
                key, _, type_id = item.partition(":")
                text = folder.special_content(key) if key in SPECIAL_TOKEN_KEYS else key
                if text is None:
                    raise FileFormatError(str(folder.path), None, f"the {folder.tokenizer_class or 'config'} "
                                          f"template needs {key}, which the config does not name")
                out.append(text + (":" + type_id if type_id else ""))
            return " ".join(out)
        single, pair = spelled(template[0]), spelled(template[1])
        used = {t.split(":")[0] for t in (single + " " + pair).split(" ") if not t.startswith("$")}
        post_processor = TemplateProcessing(single=single, pair=pair,
                                            special_tokens=[(t, merged[t]) for t in sorted(used)])
    # transformers finds its special tokens in any text (they are added tokens there), with the
    # flags the config gives them: so they are added tokens here too, not tiktoken-style special
    # tokens that a text may not contain unless allowed.
    given = {t.content: t for t in [*folder.added.values(), *folder.additional, *folder.special.values()]}
    added = {i: t for i, t in tok.added_tokens.items() if t.content not in merged}
    for text, token_id in merged.items():
        flags = given.get(text)
        added[token_id] = AddedToken(text, special=True, single_word=bool(flags and flags.single_word),
                                     lstrip=bool(flags and flags.lstrip), rstrip=bool(flags and flags.rstrip),
                                     normalized=bool(flags and flags.normalized))
    return cls(tok.model, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer,
               post_processor=post_processor, decoder=tok.decoder, added_tokens=added,
               sentencepiece_proto=tok.sentencepiece_proto)
