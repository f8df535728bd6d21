"""The grammar planner: hassil sentence templates filled with the live screen's names.

Two passes. First the screen's element and application names are hassil slot lists, so a name
is only ever matched as a slot value ("click Delete" on screen cannot change what "click send"
means). When nothing parses that way, the same templates run with wildcard slots and the
captured words are resolved against the screen by `appliance.desktop.resolve` (rapidfuzz), so
a speech-recognition slip still lands, with a lower confidence. Last, a button named by its verb
("delete this email", see button_verbs). Some templates mean more than one intent kind and are
built from the screen: "louder" sets the volume slider a step up from its value now (levels),
"tell grandma I'm late" is pick, type and send. "Do that again" and "not her, the doctor" are
read against what the person said before. Confidence stays honest: below 1.0 (and below the
router's threshold when unsure) whenever a name, a field or the meaning was a guess.

What a template means beyond its words (the roles it prefers, how close a guessed name must be,
which reading wins a tie) is its `metadata:` in sentences/*.yaml (see templates.py).
"""

from appliance.intents.grammar.planner import GrammarPlanner

__all__ = ["GrammarPlanner"]
