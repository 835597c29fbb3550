"""People: one person across channels (DESIGN "People").

An account on a channel is an identity, ``<channel>:<sender>`` (a WhatsApp number and its user id are
already one sender: :mod:`bot.channels.whatsapp.identity`). Identities linked with a one-time code
(``/link``, :mod:`board.commands.people`) or by the owner (``sabha people link``) are one person, keyed
``person:<n>``: one memory and one set of budgets. Sessions stay per channel unless
``people.shared_sessions`` is on; otherwise the advisors see a short quoted note of what the person
last said on their other channels. Modules: :mod:`.ref` (what an envelope carries), :mod:`.codes`,
:mod:`.rows` (the SQL, one transaction each), :mod:`.people` (the service), :mod:`.settings`.
"""

from board.people.people import People, Person, identity_of
from board.people.ref import PersonRef, Recent, elsewhere_lines, person_key
from board.people.rows import LinkOutcome, LinkResult
from board.people.settings import PeopleSettings

__all__ = ["LinkOutcome", "LinkResult", "People", "PeopleSettings", "Person", "PersonRef", "Recent",
           "elsewhere_lines", "identity_of", "person_key"]
