"""Is a message conversation rather than a request for knowledge ("Thanks, Waypoint!", "Hello", "Who are you?")?

Pure and lexical, no LLM call: a message is small talk when it holds at least one social word (a greeting, thanks,
a farewell, an acknowledgement, or "you" addressed to the assistant) and no content word outside the social
vocabulary. Any word that could name something to look up ("Harrow", "uuid", "summarise") makes it a request.
Such a message gets a brief reply with no search: searching for "thanks" returns passages, and a small model reads a
factoid off them.
"""

from __future__ import annotations

import re

from knowledge.sparse import tokenize

# Words that mark a message as social: greetings, thanks, farewells, acknowledgements, and words addressed to the
# assistant itself ("who are you", "what can you do").
_SOCIAL_WORDS = (
    "hi hello hey hiya howdy greetings morning afternoon evening night",
    "thanks thank thankyou thx ty cheers appreciate appreciated",
    "bye goodbye farewell later welcome sorry apologies oops worries care",
    "ok okay alright great cool nice awesome perfect excellent wonderful brilliant amazing fantastic super lovely",
    "fine good well done wow lol haha hah hmm yes yeah yep yup no nope sure understood gotcha got",
    "helpful helps helped help you your yourself",
)
SOCIAL = frozenset(" ".join(_SOCIAL_WORDS).split())
# Words that carry no content of their own in a social message: pronouns, fillers and auxiliaries that the sparse
# index's stop list keeps.
_FILLER_WORDS = (
    "i me my we us our so very much lot lots too again all just really there here now today tonight once more",
    "can could will would should may might not thats im youre name doing going",
    "see take makes sense know about tell anything else one please day",
)
FILLER = frozenset(" ".join(_FILLER_WORDS).split())
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_WORDS = 12
"""A longer message is treated as a request whatever its words."""


def small_talk(message: str, assistant: str = "waypoint") -> bool:
    """True when ``message`` is conversation: no more than ``MAX_WORDS`` words, at least one social word, and every
    content word social or filler (the assistant's own name aside). A message with no word at all (an emoji, "?")
    is small talk too: there is nothing in it to search for."""
    words = _WORD.findall(message.lower())
    if not words:
        return bool(message.strip())
    if len(words) > MAX_WORDS:
        return False
    content = [t for t in tokenize(message) if len(t) > 1 and t != assistant.lower()]  # the "s" of "that's"
    if not any(t in SOCIAL for t in content):
        return False
    return all(t in SOCIAL or t in FILLER for t in content)
