"""The WhatsApp channel: the board behind a business number (Meta's Cloud API, webhooks).

Modules: :mod:`.config` (the ``whatsapp:`` section), :mod:`.inbound` (verifying and
validating webhook notifications), :mod:`.format` (Markdown -> WhatsApp text, splitting),
:mod:`.limits` (error codes and backoff), :mod:`.outbound` (the Graph API client),
:mod:`.access` (allowlist and public mode), :mod:`.store` (sticky roles, delivery
statuses), :mod:`.channel` (the channel itself), :mod:`.cli` (``sabha whatsapp ...``),
:mod:`.plugin` (the registry's record). Only :mod:`.channel` is imported by the factory.
"""
