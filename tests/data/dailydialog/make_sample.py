"""Regenerate the bundled sample dailydialog_pp/sample/ (written for this project).

Dialogues are assembled from hand-written exchanges in the DailyDialog release format
(pre-tokenized text, `` __eou__ `` separators, act and emotion label files), plus a
multi-reference JSON lines file and DailyDialog++-style files built from them. Planted cases:
a duplicate dialogue (digits against number words, British against American spelling), a
line whose act labels disagree with its utterances, a malformed JSON line in each JSON file,
a released DD++ context that matches nothing, and a multi-reference line whose text differs.

Run: .venv/bin/python tests/data/dailydialog/make_sample.py
"""

import json
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(ROOT, "..", "..", "..", "dailydialog_pp", "sample")

TOPICS = {
    "cafe": [
        ("Good morning , what can I get for you today ?", "I ’ d like a large coffee with milk , please .", 2, 1),
        ("Would you like anything to eat with that ?", "Yes , one of those blueberry muffins , please .", 2, 3),
        ("Is that for here or to go ?", "To go , please . I ’ m in a bit of a hurry .", 2, 1),
        ("That will be 6 dollars , please .", "Here you are . Keep the change .", 3, 4),
        ("Thank you very much . Have a nice day !", "You too . See you tomorrow .", 1, 1),
        ("Do you come here every morning ?", "Almost every day . The coffee here is the best in town .", 2, 1),
        ("Have you tried our new sandwich ?", "Not yet . What ’ s in it ?", 2, 2),
        ("It has cheese , tomato and fresh basil .", "Sounds delicious . I ’ ll try it next time .", 1, 4),
        ("Our favourite customers get a free cup on Fridays .", "Really ? That ’ s a great idea !", 1, 2),
    ],
    "travel": [
        ("Excuse me , how do I get to the railway station ?", "Go straight ahead and turn left at the second light .", 2, 3),
        ("Is it far from here ?", "No , it ’ s about a ten-minute walk .", 2, 1),
        ("Can I take a bus instead ?", "Yes , the number 12 bus stops right over there .", 2, 1),
        ("How much is the fare ?", "It ’ s 2 dollars , and you need exact change .", 2, 1),
        ("When does the next train to Boston leave ?", "There is one at 3 o ’ clock from platform four .", 2, 1),
        ("Do I need to book a seat ?", "Not on weekdays , but it gets crowded on Sundays .", 2, 1),
        ("Where can I buy a ticket ?", "At the machines near the main entrance .", 2, 3),
        ("Thanks a lot . You ’ ve been very helpful .", "No problem . Enjoy your trip !", 1, 1),
        ("I ’ m travelling with my kids , is there a discount ?", "Children under 5 travel for free .", 2, 1),
    ],
    "work": [
        ("Have you finished the report for the meeting ?", "Almost . I just need to check the figures once more .", 2, 1),
        ("The boss wants it on his desk by noon .", "Don ’ t worry , it will be ready before then .", 1, 4),
        ("Did you hear that Lisa is leaving the company ?", "No ! Why is she leaving ?", 2, 2),
        ("She got a better offer from a bank in Chicago .", "Good for her . We will miss her though .", 1, 1),
        ("Are you coming to her farewell party on Friday ?", "Of course . Should we buy her a present ?", 2, 2),
        ("Let ’ s collect some money from everyone .", "Good idea . I ’ ll send an email to the team .", 3, 4),
        ("How is your new project going ?", "Slowly . The client keeps changing his mind .", 2, 1),
        ("That sounds frustrating .", "It is , but the pay is good , so I can ’ t complain .", 1, 1),
        ("Can you help me organise the files this afternoon ?", "Sure , I ’ m free after 2 .", 3, 4),
    ],
    "health": [
        ("You look pale . Are you feeling all right ?", "Not really . I have a terrible headache .", 2, 1),
        ("Maybe you should see a doctor .", "I think I ’ ll just go home and rest .", 3, 4),
        ("How long have you had this headache ?", "Since yesterday evening . It ’ s getting worse .", 2, 1),
        ("Have you taken any medicine ?", "I took 2 aspirins this morning , but they didn ’ t help .", 2, 1),
        ("Do you sleep well at night ?", "Not at all . I wake up every few hours .", 2, 1),
        ("You should drink more water and get some exercise .", "You ’ re right . I ’ ll start jogging again .", 3, 4),
        ("How often do you go to the gym ?", "About three times a week , usually after work .", 2, 1),
        ("Is it expensive ?", "Not really , it ’ s 30 dollars a month .", 2, 1),
        ("I should join too . Can I come with you on Monday ?", "Of course ! I ’ ll pick you up at 6 .", 3, 4),
    ],
    "shopping": [
        ("Can I help you find something ?", "Yes , I ’ m looking for a grey sweater .", 2, 3),
        ("What size do you wear ?", "Medium , I think .", 2, 1),
        ("How about this one ? It ’ s on sale .", "It ’ s nice . Can I try it on ?", 3, 2),
        ("Sure , the fitting room is over there .", "Thanks . I ’ ll be right back .", 1, 4),
        ("How does it fit ?", "It ’ s a little tight . Do you have a larger one ?", 2, 2),
        ("Let me check in the back .", "Take your time .", 4, 1),
        ("Here you are , this is a large .", "Perfect . How much is it ?", 1, 2),
        ("It ’ s 25 dollars after the discount .", "Great , I ’ ll take it . Can I pay by credit card ?", 1, 2),
        ("Of course . Would you like a bag ?", "No , thanks . I brought my own .", 2, 1),
    ],
}
EMOTIONS = [0, 0, 0, 4, 0, 6, 0, 0, 5, 0]


def utterances(topic, start, n):
    ex = TOPICS[topic]
    out = []
    i = start
    while len(out) < n:
        a, b, act_a, act_b = ex[i % len(ex)]
        out += [(a, act_a), (b, act_b)]
        i += 1
    return out[:n]


def main():
    plan = {  # split -> list of (topic, start exchange, turns)
        "train": [("cafe", 0, 7), ("travel", 0, 9), ("work", 0, 10), ("health", 0, 11), ("shopping", 0, 12),
                  ("cafe", 3, 4), ("travel", 4, 5), ("work", 4, 6), ("health", 3, 3), ("shopping", 4, 2),
                  ("cafe", 5, 13), ("travel", 2, 14), ("work", 2, 8), ("health", 5, 17), ("shopping", 2, 5),
                  ("cafe", 1, 6), ("travel", 6, 4), ("work", 6, 3), ("health", 1, 9), ("shopping", 6, 10),
                  ("cafe", 2, 2)],
        "validation": [("cafe", 4, 8), ("travel", 1, 6), ("work", 1, 5), ("health", 2, 4), ("shopping", 1, 7),
                       ("travel", 0, 9)],
        "test": [("cafe", 6, 5), ("travel", 3, 8), ("work", 3, 4), ("health", 4, 6), ("shopping", 3, 10),
                 ("cafe", 7, 3), ("work", 5, 7), ("health", 6, 2)],
    }
    os.makedirs(OUT, exist_ok=True)
    dialogues = {}
    for split, items in plan.items():
        d = os.path.join(OUT, split)
        os.makedirs(d, exist_ok=True)
        lines, acts, emos, dl = [], [], [], []
        for k, (topic, start, n) in enumerate(items):
            us = utterances(topic, start, n)
            texts = [t for t, _ in us]
            if split == "validation" and k == 5:
                # planted duplicate of train dialogue 1: digits as words, spelling variant
                texts = [t.replace("12", "twelve").replace("2 dollars", "two dollars").replace("3 o", "three o")
                         .replace("travelling", "traveling") for t in texts]
            labels = [a for _, a in us]
            em = [EMOTIONS[(k + j) % len(EMOTIONS)] for j in range(n)]
            if split == "train" and k == 7:
                labels = labels[:-1]  # planted: one act label missing
            lines.append(" __eou__ ".join(texts) + " __eou__")
            acts.append(" ".join(map(str, labels)) + " ")
            emos.append(" ".join(map(str, em)) + " ")
            dl.append((topic, texts, [a for _, a in us], em))
        dialogues[split] = dl
        for name, rows in ((f"dialogues_{split}.txt", lines), (f"dialogues_act_{split}.txt", acts),
                           (f"dialogues_emotion_{split}.txt", emos)):
            with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
                fh.write("\n".join(rows) + "\n")

    # multi-reference test set: PTB-lowercased responses, curly -> straight in text
    acts_names = {1: "inform", 2: "question", 3: "directive", 4: "commissive"}
    emo_names = {0: "no_emotion", 4: "happiness", 5: "sadness", 6: "surprise"}
    extra = ["that sounds good .", "i do n't know , to be honest .", "really ? tell me more .",
             "okay , thanks for letting me know .", "i 'm not sure about that .", "let me think about it .",
             "that 's great news !", "why do you ask ?", "sure , no problem .", "i ca n't believe it !"]
    out = []
    for index, (topic, texts, acts_, em) in enumerate(dialogues["test"]):
        dialogue = []
        for j, t in enumerate(texts):
            u = {"emotion": emo_names[em[j]], "act": acts_names[acts_[j]], "text": t.replace("’", "'")}
            if j < len(texts) - 1:
                first = " ".join(texts[j + 1].replace("’", "'").lower().replace(" ' ", " '").split())
                u["responses"] = [first] + [extra[(index * 3 + j + r) % len(extra)] for r in range(4)]
            dialogue.append(u)
        if index == 5:
            dialogue[0]["text"] = "A completely different first line ."  # planted text mismatch
        if index == 2:
            dialogue[1]["responses"][3] = "   "  # planted empty reference
        out.append(json.dumps({"fold": "test", "topic": topic, "dialogue": dialogue, "index": index}))
    out.append('{"fold": "test", "topic": "broken", "dialogue": [')  # planted malformed line
    with open(os.path.join(OUT, "multireftest.json"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")

    # DD++-style files: de-tokenized contexts (?, ! attached), fresh crowd responses
    def detok(t):
        return t.replace(" ?", "?").replace(" !", "!").replace(" ’ ", "'")

    pos = ["Sure, why not.", "That sounds lovely to me.", "I was hoping you would say that!",
           "Can we talk about this later?", "Thanks, I really appreciate your help.", "Let me check my calendar first.",
           "Oh no, that is not what I expected.", "I think that's a wonderful plan.", "Could you say that again, please?",
           "Honestly, I have no idea what to do."]
    adv = ["The train to the coffee shop sells muffins on sale.", "My doctor wears a grey sweater to the gym.",
           "The report about the bus fare was very long.", "I bought a present for the platform yesterday.",
           "Basil grows in the fitting room every Friday."]
    rnd = ["I love going to the beach in summer.", "My brother plays the guitar very well.",
           "We watched a great movie last night.", "The library closes at nine on weekdays.",
           "She painted her kitchen bright yellow."]
    ddpp = os.path.join(OUT, "ddpp")
    os.makedirs(ddpp, exist_ok=True)

    def record(rid, ctx, key="id", negatives=True, k=0):
        r = {key: rid, "context": [detok(t) for t in ctx],
             "positive_responses": [pos[(k + i) % len(pos)] for i in range(5)]}
        if negatives:
            r["adversarial_negative_responses"] = [adv[(k + i) % len(adv)] for i in range(5)]
            r["random_negative_responses"] = [rnd[(k + i) % len(rnd)] for i in range(5)]
        return json.dumps(r)

    tr = dialogues["train"]
    dev = [record(0, tr[0][1][:6], k=0), record(1, tr[1][1][:3], k=1), record(2, tr[1][1][4:8], k=2),
           record(3, ["This context was never in DailyDialog .", "Neither was this one ."], k=3)]
    test = [record(0, tr[2][1][0:3], k=4), record(1, tr[2][1][4:7], k=5), record(2, tr[2][1][7:9], k=6),
            '{"id": 3, "context": "not a list", "positive_responses": []}']
    positives = [record(0, tr[5][1][:3], key="dialog_id", negatives=False, k=7),
                 record(1, tr[6][1][:4], key="dialog_id", negatives=False, k=8),
                 record(2, tr[3][1][0:3], key="dialog_id", negatives=False, k=9),
                 record(3, dialogues["test"][0][1][:4], key="dialog_id", negatives=False, k=1)]
    for name, rows in (("dev.json", dev), ("test.json", test), ("data_positives.json", positives)):
        with open(os.path.join(ddpp, name), "w", encoding="utf-8") as fh:
            fh.write("\n".join(rows))  # like the release: no trailing newline


if __name__ == "__main__":
    main()
