"""pocketsphinx 5.1.1 (its en-us model) measured as the closed-set engine and as a wake-phrase
spotter, on the tuning audio of appliance_lab.tuning.closed_set_tune (issue 15). Not a
dependency: run it in a venv with `pip install pocketsphinx==5.1.1` and the appliance's:
    python -m appliance_lab.tuning.closed_set_pocketsphinx piper,en-us-150
Each screen's grammar is its 14 tuning commands plus 300 random sentences of its closed set
(easier than the whole set); sentences with words missing from cmudict are dropped.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import appliance_lab.tuning.closed_set_tune as T
from appliance.desktop.sim import SimDesktop
from appliance.voice.hearing.closed_set import closed_set
from appliance.voice.sink import screen_names_of


def main() -> None:
    from pocketsphinx import Decoder, get_model_path  # type: ignore[import-not-found]

    dictionary = Path(get_model_path()) / "en-us" / "cmudict-en-us.dict"
    known = {line.split()[0] for line in dictionary.read_text().splitlines() if line.strip()}
    voices = sys.argv[1].split(",") if len(sys.argv) > 1 else ["piper", "en-us-150"]
    res: dict[str, Any] = {"closed_ok": 0, "closed_n": 0, "oov_dropped": 0, "wake_hit": 0,
                           "wake_n": 0, "wake_fa": 0, "nonwake_n": 0}
    ms: list[float] = []
    rows: list[tuple[str, str, str, str, bool]] = []
    for scene, path in T.SCENES.items():
        cs = closed_set(*screen_names_of(SimDesktop.from_file(path).snapshot()))
        wanted = list(T.COMMON + T.COMMANDS[scene])
        random.seed(0)
        pool = [s for s in random.sample(cs.sentences, 300) + wanted
                if all(w in known for w in s.split())]
        pool = list(dict.fromkeys(pool))
        res["oov_dropped"] += sum(1 for w in wanted if not all(x in known for x in w.split()))
        alts = " | ".join(re.sub(r"[^a-z' ]", "", s) for s in pool
                          if re.sub(r"[^a-z' ]", "", s).strip())
        jsgf = f"#JSGF V1.0;\ngrammar cmd;\npublic <s> = [hey juniper] ( {alts} );\n"
        dec = Decoder(samprate=16000, lm=None, loglevel="FATAL")
        dec.add_jsgf_string("cmd", jsgf)
        dec.activate_search("cmd")
        kws = Decoder(samprate=16000, lm=None, loglevel="FATAL", kws_threshold=1e-25)
        kws.add_keyphrase("wake", "hey juniper")
        kws.activate_search("wake")
        for voice in voices:
            for cmd in wanted + T.OPEN[scene]:
                for wake in (True, False):
                    pcm = T.noisy(T.speech(("hey juniper, " if wake else "") + cmd, voice),
                                  None, 0)
                    t = time.monotonic()
                    dec.start_utt()
                    dec.process_raw(pcm, full_utt=True)
                    dec.end_utt()
                    ms.append((time.monotonic() - t) * 1000)
                    hyp = dec.hyp().hypstr if dec.hyp() else ""
                    kws.start_utt()
                    kws.process_raw(pcm, full_utt=True)
                    kws.end_utt()
                    spotted = bool(kws.hyp())
                    if wake:
                        res["wake_n"] += 1
                        res["wake_hit"] += spotted
                    else:
                        res["nonwake_n"] += 1
                        res["wake_fa"] += spotted
                    if wake and cmd in wanted:
                        res["closed_n"] += 1
                        ok = hyp.replace("hey juniper", "").strip() == cmd
                        res["closed_ok"] += ok
                        rows.append((scene, voice, cmd, hyp, ok))
    res["ms_p50_p95"] = [round(float(np.percentile(ms, 50))), round(float(np.percentile(ms, 95)))]
    print(json.dumps(res))
    for r in rows:
        if not r[4]:
            print(r)


if __name__ == "__main__":
    main()
