"""What a served model reads: its tokenizer (``--niah-tokenizer``) and its window, and whence.

The window (the server's limit, special tokens included) is ``--niah-max-seq-length`` if
given, else what the server reports, else the model's preset's, else the ``max_seq_length``
of ``sentence_bert_config.json`` beside the tokenizer; else the run is refused. What a text
may hold is the window minus the tokenizer's special tokens and the prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from pytest_niah.embed.fast_tokenizer import HaystackTokenizer, check_vocabulary
from pytest_niah.embed.models import tokenizer_file
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote_http import EXCERPT_CHARS
from pytest_niah.embed.remote_presets import is_tiktoken, remote_preset, served_tokenizer
from pytest_niah.embed.tiktoken_tokenizer import TiktokenTokenizer, load_tiktoken
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.plan import QUERY


class RemoteWindow:
    """A served model's tokenizer and window.

    Args:
        name: The model's address, for the vocabulary check.
        what: The model and endpoint, for messages.
        model: The served model's name (its preset's key).
        tokenizer: ``--niah-tokenizer``; empty uses the model's preset's.
        requested: ``--niah-max-seq-length``; ``None`` asks the server, then the preset, then
            the tokenizer folder.
        reported: Asks the server for its window: (tokens, the field that said so) or ``None``.
    """

    def __init__(
        self,
        name: str,
        *,
        what: str,
        model: str,
        tokenizer: str,
        requested: int | None,
        reported: Callable[[], tuple[int, str] | None],
    ) -> None:
        self.name, self.what, self.model = name, what, model
        self.preset = remote_preset(model)
        self.tokenizer_spec = served_tokenizer(tokenizer, model)
        # A tiktoken encoding has no file beside which a sentence_bert_config.json could sit.
        self.tokenizer_path = (
            None if is_tiktoken(self.tokenizer_spec) else tokenizer_file(self.tokenizer_spec)
        )
        self.requested = requested
        self._reported = reported

    # -- tokenizer ---------------------------------------------------------------------------

    @cached_property
    def _raw_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        try:
            raw = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:
            raise ConfigError(
                f"--niah-tokenizer: {str(self.tokenizer_path)!r} is not a fast tokenizer "
                f"({type(exc).__name__}: {str(exc).strip()[:EXCERPT_CHARS]})",
                "give the tokenizer.json of the served model, as transformers saves it",
            ) from None
        check_vocabulary(self.name, raw)
        return raw

    @cached_property
    def tokenizer(self) -> HaystackTokenizer | TiktokenTokenizer:
        """The served model's tokenizer (``--niah-tokenizer``), truncation and padding off."""
        if self.tokenizer_path is None:
            return load_tiktoken(self.tokenizer_spec)
        return HaystackTokenizer(self._raw_tokenizer)

    # -- window ------------------------------------------------------------------------------

    @cached_property
    def window(self) -> tuple[int, str]:
        """The window in tokens, special tokens included, and where it comes from."""
        reported = self._reported()
        if self.requested is not None:
            if reported is not None and self.requested > reported[0]:
                raise ConfigError(
                    f"--niah-max-seq-length={self.requested} is more than {self.what} "
                    f"reads (the server reports {reported[1]} {reported[0]})",
                    f"give at most {reported[0]}",
                )
            return self.requested, "--niah-max-seq-length"
        if reported is not None:
            return reported[0], f"the server's {reported[1]}"
        if self.preset is not None:
            return self.preset.max_seq_length, f"the {self.model} preset"
        if self.tokenizer_path is None:
            raise self._no_window()
        config = self.tokenizer_path.parent / "sentence_bert_config.json"
        try:
            value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        except (OSError, ValueError, AttributeError):
            value = None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, f"{config.name} beside --niah-tokenizer"
        raise self._no_window()

    def _no_window(self) -> ConfigError:
        return ConfigError(
            f"pytest-niah cannot tell how many tokens {self.what} reads: the server reports no "
            "max_model_len or max_input_length and the tokenizer has no "
            "sentence_bert_config.json beside it",
            "give the server's input limit, special tokens included, as --niah-max-seq-length=N",
        )

    def known(self) -> int | None:
        """The window once it is known (nothing is asked for it); ``None`` before."""
        return self.window[0] if "window" in self.__dict__ else None

    def windows(self, prompts: Mapping[str, str]) -> tuple[Windows, str]:
        """The window minus the tokenizer's special tokens and each kind's prompt; a note on it.

        Args:
            prompts: The prompt of each input kind (``query``, ``document``).
        """
        window, origin = self.window
        # tiktoken encodings add none: OpenAI-style APIs count the text's tokens only.
        specials = (
            0
            if self.tokenizer_path is None
            else int(self._raw_tokenizer.num_special_tokens_to_add(False))
        )
        prompt_tokens = {
            kind: len(self.tokenizer.encode_batch([prompt])[0].ids) if prompt else 0
            for kind, prompt in prompts.items()
        }
        reads = {kind: window - specials - n for kind, n in prompt_tokens.items()}
        if min(reads.values()) < 1:
            raise ConfigError(
                f"a window of {window} tokens leaves {self.what} nothing to read after "
                f"{specials} special tokens and the prompt",
                "give a larger --niah-max-seq-length or a shorter prompt",
            )
        note = f"{self.model}: a window of {window} tokens ({origin}), {specials} of them special"
        return Windows(reads[QUERY], reads["document"]), note
