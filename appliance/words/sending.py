"""Names of buttons that send away what their window's fields say ("Send", "Submit").

Shared by the policy, which reads such a press back before it is done, and the grammar, which
never takes a sending window's only field for a search box or a list's entry.
"""

from __future__ import annotations

import re

SENDING_WORDS = re.compile(r"\b(send|submit|post|publish)\b", re.IGNORECASE)


def sends(name: str) -> bool:
    """Whether pressing an element of this name sends what its window's fields say."""
    return bool(SENDING_WORDS.search(name))
