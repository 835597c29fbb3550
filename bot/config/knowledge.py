"""Config sections for what agents know: ``knowledge``, ``web_search``, ``memory`` and ``guardrails``.

Each section validates its YAML (unknown keys are errors, like every section) and turns
itself into the board's plain settings (:meth:`settings`). ``web_search`` is off until a
``provider`` is set; its key comes from ``web_search.api_key`` (write ``${VAR}``) or the
provider's usual variable (``$TAVILY_API_KEY``, ``$BRAVE_API_KEY``). A provider without a
key is logged, naming the variable to set, and the tool is not offered.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field, SecretStr, field_validator

from board.agent.guardrail_settings import (
    DEFAULT_EMPTY_REPLY,
    DEFAULT_REFUSAL,
    DEFAULT_UNSOURCED_NOTE,
    SHINGLE,
    GuardrailSettings,
)
from bot.config.base import StrictModel, base_url, blank_is_unset, section

if TYPE_CHECKING:  # the board's modules load when the board's settings are built (`sabha souls` needs none)
    from board.agent.web_search import WebSearchSettings
    from board.memory.consolidation.settings import ConsolidationSettings
    from board.memory.facts import MemorySettings
    from board.memory.knowledge.base import KnowledgeSettings
    from board.recall.embedder import EmbeddingSettings

__all__ = ["ConsolidationSection", "GuardrailsSection", "KnowledgeSection", "MemorySection", "WebSearchSection"]

log = logging.getLogger("sabha.config")


class KnowledgeSection(StrictModel):
    """``knowledge``: documents agents search (workspace/knowledge/shared and workspace/knowledge/<role>)."""

    enabled: bool = Field(True, description="false: no index, no search_knowledge_base tool")
    folder: str = Field("knowledge", min_length=1, description="relative to the workspace")
    max_results: int = Field(5, ge=1, le=20, description="passages one search returns")
    chunk_chars: int = Field(1200, ge=200, le=8000, description="longest chunk a document is cut into")
    result_chars: int = Field(1000, ge=100, le=8000, description="longest passage text sent to the model")
    max_file_mb: float = Field(20, gt=0, le=500, description="larger documents are not indexed (and logged)")

    def settings(self) -> KnowledgeSettings:
        """The board's plain settings."""
        from board.memory.knowledge.base import KnowledgeSettings

        return KnowledgeSettings(enabled=self.enabled, folder=self.folder, max_results=self.max_results,
                                 chunk_chars=self.chunk_chars, result_chars=self.result_chars,
                                 max_file_bytes=int(self.max_file_mb * 1024 * 1024))


class WebSearchSection(StrictModel):
    """``web_search``: the web_search tool through Tavily or Brave Search (off while provider is unset)."""

    provider: Literal["tavily", "brave"] | None = Field(None, description="unset: the tool is not offered")
    api_key: SecretStr | None = Field(None, description="default: $TAVILY_API_KEY / $BRAVE_API_KEY")
    base_url: str | None = Field(None, description="default: https://api.tavily.com / https://api.search.brave.com")
    max_results: int = Field(5, ge=1, le=20)
    timeout_s: float = Field(15, gt=0, le=120)
    cache_ttl_s: float = Field(600, ge=0, le=86_400, description="answer a repeated query from memory; 0: off")
    snippet_chars: int = Field(500, ge=50, le=4000)

    _blank_is_unset = blank_is_unset("api_key", "base_url", "provider")

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return base_url(value, "https://api.tavily.com") if value is not None else None

    def settings(self, env: Mapping[str, str] | None = None) -> WebSearchSettings | None:
        """The board's plain settings; None when no provider is set or it has no key (logged)."""
        if self.provider is None:
            return None
        from board.agent.web_search import KEY_ENV, SearchProvider, WebSearchSettings

        provider = SearchProvider(self.provider)
        env = os.environ if env is None else env
        key = self.api_key.get_secret_value().strip() if self.api_key is not None else ""
        key = key or (env.get(KEY_ENV[provider]) or "").strip()
        if not key:
            log.error("web_search.provider is %s but there is no API key: export %s or set web_search.api_key; "
                      "until then the web_search tool is not offered", provider.value, KEY_ENV[provider])
            return None
        return WebSearchSettings(provider=provider, api_key=key, base_url=self.base_url,
                                 max_results=self.max_results, timeout_s=self.timeout_s,
                                 cache_ttl_s=self.cache_ttl_s, snippet_chars=self.snippet_chars)


class ConsolidationSection(StrictModel):
    """``memory.consolidation``: memory that tidies itself. Once a day after new facts were heard from a person,
    the cheap model merges their duplicate and contradicted facts, expires stale ones and keeps a short profile;
    the person's own word (corrected by them, saved with the remember tool, written by the owner) is never
    changed. ``sabha memory changes`` shows each run's diff, ``sabha memory undo`` takes one back."""

    enabled: bool = Field(True, description="false: no consolidation runs (facts are kept as heard)")
    who: Literal["owner", "members"] = Field(
        "members", description="whose facts: the owner's only, or the owner's and every allowed person's "
                               "(strangers' never: what they say is not extracted)")
    hour: int = Field(3, ge=0, le=23, description="the hour (board.timezone) a person's run is due, the day after "
                                                  "new facts were heard")
    daily_usd: float = Field(0.25, ge=0, description="what consolidation may spend on model calls a day (UTC), "
                                                     "all people together; past it runs wait for the next day")
    min_facts: int = Field(3, ge=1, le=1000, description="a person with fewer facts it may change is not sent to "
                                                         "the model")
    max_facts: int = Field(80, ge=2, le=500, description="the newest facts of a person one run looks at")
    stale_days: int = Field(180, ge=1, le=3650, description="a fact untouched this long may be expired as stale")
    profile_chars: int = Field(400, ge=50, le=2000, description="the longest profile kept per person")

    def settings(self) -> ConsolidationSettings:
        """The board's plain settings."""
        from board.memory.consolidation.settings import ConsolidationSettings, ConsolidationWho

        return ConsolidationSettings(enabled=self.enabled, who=ConsolidationWho(self.who), hour=self.hour,
                                     daily_usd=self.daily_usd, min_facts=self.min_facts, max_facts=self.max_facts,
                                     stale_days=self.stale_days, profile_chars=self.profile_chars)


class MemorySection(StrictModel):
    """``memory``: facts agents remember about users (the remember tool, /memory, /forget)."""

    enabled: bool = Field(True, description="false: no remember tool, nothing recalled")
    cross_role: bool = Field(False, description="true: every role sees what any role was told about a user")
    max_facts_per_role: int = Field(50, ge=1, le=1000, description="per user; the oldest is dropped past it")
    recall_limit: int = Field(30, ge=0, le=200, description="facts shown in a turn's prompt")
    auto_extract: bool = Field(True, description="after each turn the cheap model keeps durable facts the person "
                                                 "stated (off the reply's path)")
    max_facts_per_user: int = Field(100, ge=1, le=2000, description="facts heard per person; the least recently "
                                                                    "updated is dropped past it")
    extract_concurrency: int = Field(2, ge=1, le=16, description="extractions running at once")
    extract_per_hour: int = Field(30, ge=0, le=1000, description="extraction calls per person in any hour; past "
                                  "it their messages are not read for facts until the hour has passed (0: no cap)")
    embedding_model: str | None = Field(
        None, description="recall by meaning: the embedding model as provider:model (openai:text-embedding-3-small, "
                          "gemini:gemini-embedding-001, or openai:<name> with embedding_base_url for any "
                          "OpenAI-compatible server); unset: recall matches words only")
    embedding_base_url: str | None = Field(None, description="the embeddings endpoint; default: OpenAI's, or Gemini's "
                                                             "OpenAI-compatible one for gemini: models")
    embedding_api_key: SecretStr | None = Field(None, description="write ${VAR}; default: $OPENAI_API_KEY or "
                                                                  "$GEMINI_API_KEY by the model's provider")
    embedding_dimensions: int | None = Field(None, ge=8, le=8192, description="ask the model for vectors this long "
                                                                             "(text-embedding-3 and gemini models "
                                                                             "can shorten); unset: its own size")
    embedding_batch: int = Field(64, ge=1, le=2048, description="passages embedded in one request, in the background")

    _embedding_blank_is_unset = blank_is_unset("embedding_model", "embedding_base_url", "embedding_api_key")

    @field_validator("embedding_model")
    @classmethod
    def _embedding_model(cls, value: str | None) -> str | None:
        if value is None:
            return None
        provider, colon, name = value.strip().partition(":")
        if not colon or not name.strip() or provider.lower() not in ("openai", "gemini", "google"):
            raise ValueError("must be provider:model, e.g. openai:text-embedding-3-small or "
                             "gemini:gemini-embedding-001 (openai:<name> with embedding_base_url for any "
                             "OpenAI-compatible server)")
        return value.strip()

    @field_validator("embedding_base_url")
    @classmethod
    def _embedding_base_url(cls, value: str | None) -> str | None:
        return base_url(value, "https://api.openai.com/v1") if value is not None else None

    def embedding_settings(self, env: Mapping[str, str] | None = None) -> EmbeddingSettings | None:
        """``embedding_*`` as the board's plain settings; None when no model is set."""
        if self.embedding_model is None:
            return None
        from board.recall.embedder import EmbeddingSettings

        env = os.environ if env is None else env
        provider = self.embedding_model.partition(":")[0].lower()
        variable = "GEMINI_API_KEY" if provider in ("gemini", "google") else "OPENAI_API_KEY"
        key = self.embedding_api_key.get_secret_value().strip() if self.embedding_api_key is not None else ""
        return EmbeddingSettings(model=self.embedding_model, base_url=self.embedding_base_url,
                                 api_key=key or (env.get(variable) or "").strip(),
                                 dimensions=self.embedding_dimensions, batch=self.embedding_batch)
    consolidation: ConsolidationSection = section()

    def settings(self) -> MemorySettings:
        """The board's plain settings."""
        from board.memory.facts import MemorySettings

        return MemorySettings(enabled=self.enabled, cross_role=self.cross_role,
                              max_facts_per_role=self.max_facts_per_role, recall_limit=self.recall_limit,
                              auto_extract=self.auto_extract, max_facts_per_user=self.max_facts_per_user,
                              extract_concurrency=self.extract_concurrency, extract_per_hour=self.extract_per_hour,
                              consolidation=self.consolidation.settings())


class GuardrailsSection(StrictModel):
    """``guardrails``: checks every answer passes before it is sent (each hit logged in the state db)."""

    enabled: bool = True
    enforce: bool = Field(True, description="false: only log what would have been changed")
    empty: bool = Field(True, description="replace an empty answer with empty_reply")
    empty_reply: str = Field(DEFAULT_EMPTY_REPLY, min_length=1)
    prompt_leak: bool = Field(True, description="refuse an answer quoting a long run of the system prompt")
    prompt_leak_words: int = Field(20, ge=SHINGLE, le=1000, description="consecutive words that count as a quote")
    refusal: str = Field(DEFAULT_REFUSAL, min_length=1)
    model_name: bool = Field(True, description="scrub the underlying model's name from answers")
    hide_model_for: list[str] | None = Field(None, description="roles whose persona hides the model; unset: all")
    model_name_replacement: str = "[withheld]"
    extra_model_terms: list[str] = Field(default_factory=list, description="more names to scrub")
    cite_sources_roles: list[str] = Field(
        default_factory=lambda: ["research", "analyst"],
        description="roles whose figures must name a source (else a note says they are unverified)")
    unsourced_note: str = Field(DEFAULT_UNSOURCED_NOTE, min_length=1)

    def settings(self) -> GuardrailSettings:
        """The board's plain settings."""
        return GuardrailSettings(
            enabled=self.enabled, enforce=self.enforce, empty=self.empty, empty_reply=self.empty_reply,
            prompt_leak=self.prompt_leak, prompt_leak_words=self.prompt_leak_words, refusal=self.refusal,
            model_name=self.model_name,
            hide_model_for=tuple(self.hide_model_for) if self.hide_model_for is not None else None,
            model_name_replacement=self.model_name_replacement, extra_model_terms=tuple(self.extra_model_terms),
            cite_sources_roles=tuple(self.cite_sources_roles), unsourced_note=self.unsourced_note,
        )
