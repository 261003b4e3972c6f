"""Generate the text that textstat's workloads read.

Four inputs, each a pure function of its seed, so running this again rewrites the same bytes:

- novel.txt: a serialised adventure novel, hard-wrapped at 72 columns like a Project
  Gutenberg file, with chapter headings and dialogue;
- reviews.csv: product reviews from an outdoor-gear shop: rating, title and a body that can
  hold commas, quotes and blank lines, so the CSV needs real quoting;
- forum-export.txt: a forum thread copied out of a browser: CRLF line endings, one paragraph
  a line, typographic apostrophes and dashes, quoted replies and links;
- holdout/tickets.csv: IT support tickets, never shown to a proposer.

Words are drawn with Zipf-distributed frequencies from a vocabulary of common English words
plus invented names of people, places and brands, so the counts have the long tail real text
has: a few words are everywhere and about half the distinct words occur once or twice.

    python data/generate.py            # writes next to this script
    python data/generate.py --check    # exits 1 if a committed file differs

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
import textwrap
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent


def split_words(text: str) -> list[str]:
    return text.split()


NOUNS = split_words("""
house door window road river hill stone tree wind sea ship boat harbour shore cliff lamp fire
table chair bed room wall roof stair floor garden field forest path bridge village town market
street church bell tower clock letter book page map compass knife rope coat boot hat glove bag
box chest key lock coin purse ring cup bottle jar candle mirror picture voice face hand eye
head heart shoulder arm finger mouth name word story song night morning evening day week year
winter summer moon star sky cloud storm fish bird horse dog cat mother father brother sister
daughter son friend stranger keeper captain doctor priest teacher child crowd soldier sailor
farmer merchant king queen prince island mountain valley lake well mill kitchen cellar attic
corridor gate fence wagon cart lantern oar sail mast deck cabin anchor net hook tide wave gull
beacon signal memory promise secret lie journey reason answer question plan chance moment
hour minute cottage inn tavern fisherman widow orphan lord lady servant guard thief rider
messenger wheel barrel ladder shelf drawer blanket pillow kettle plate spoon basket cloak
scarf sword shield flag drum whistle feather shell pebble reed branch root leaf flower seed
orchard meadow marsh dune cove bay reef rock cave tunnel well-head pier quay warehouse chapel
grave stone-wall hedge ditch track lane square fountain statue window-sill chimney hearth
""")
MASS_NOUNS = split_words("""
water salt bread smoke ash rain snow ice fog mist silence courage anger hope fear truth light
darkness dust mud sand grass wool linen iron tar oil wine tea soup weather news music
""")
IRREGULAR_PLURALS = {"child": "children", "mouse": "mice", "man": "men", "woman": "women",
                     "foot": "feet", "tooth": "teeth", "knife": "knives", "leaf": "leaves",
                     "wife": "wives", "thief": "thieves", "shelf": "shelves", "fish": "fish",
                     "widow": "widows", "sheep": "sheep", "scarf": "scarves", "life": "lives"}

ADJECTIVES = split_words("""
old young small great long short dark bright cold warm wet dry quiet loud heavy narrow wide
deep shallow high low strange familiar empty full broken whole distant near grey white black
red green blue golden silver pale thin thick sharp soft hard rough smooth tired hungry angry
gentle kind cruel careful careless brave frightened proud patient sudden slow quick bitter
sweet salty damp muddy dusty wooden iron ancient new hidden open closed lonely crowded silent
steady weary restless faint fierce hollow crooked bare bleak calm clear cloudy crisp
eager faithful foolish fragile grim grand harsh honest humble idle jagged keen lame late
merry mild misty nervous noble odd plain polite rare ragged rusty sacred scarlet secret
shabby shy sleepy solemn sore sour stern stiff stout sullen swift tall tame tender tidy
timid vast vivid wicked wild wise worn wretched
""")
ADVERBS = split_words("""
slowly quickly quietly suddenly carefully gently again still already almost perhaps certainly
nearly softly sharply finally together alone away forward outside inside often never always
rarely barely hardly simply merely truly firmly loudly calmly bitterly eagerly gravely kindly
""")
# (base, past, participle) of verbs that take an object.
TRANSITIVE = [
    ("open", "opened", "opened"), ("close", "closed", "closed"), ("carry", "carried", "carried"),
    ("hold", "held", "held"), ("find", "found", "found"), ("lose", "lost", "lost"),
    ("watch", "watched", "watched"), ("see", "saw", "seen"), ("hear", "heard", "heard"),
    ("follow", "followed", "followed"), ("leave", "left", "left"), ("reach", "reached", "reached"),
    ("pull", "pulled", "pulled"), ("push", "pushed", "pushed"), ("light", "lit", "lit"),
    ("mend", "mended", "mended"), ("build", "built", "built"), ("break", "broke", "broken"),
    ("take", "took", "taken"), ("bring", "brought", "brought"), ("keep", "kept", "kept"),
    ("remember", "remembered", "remembered"), ("forget", "forgot", "forgotten"),
    ("search", "searched", "searched"), ("cross", "crossed", "crossed"), ("hide", "hid", "hidden"),
    ("drop", "dropped", "dropped"), ("lift", "lifted", "lifted"), ("guard", "guarded", "guarded"),
    ("count", "counted", "counted"), ("study", "studied", "studied"), ("fear", "feared", "feared"),
    ("touch", "touched", "touched"), ("paint", "painted", "painted"), ("sell", "sold", "sold"),
    ("buy", "bought", "bought"), ("burn", "burned", "burned"), ("bury", "buried", "buried"),
    ("steal", "stole", "stolen"), ("tie", "tied", "tied"), ("wash", "washed", "washed"),
    ("fill", "filled", "filled"), ("empty", "emptied", "emptied"), ("shut", "shut", "shut"),
    ("mark", "marked", "marked"), ("trust", "trusted", "trusted"), ("doubt", "doubted", "doubted"),
]
# (base, past) of verbs that do not.
INTRANSITIVE = [
    ("walk", "walked"), ("run", "ran"), ("wait", "waited"), ("listen", "listened"),
    ("sleep", "slept"), ("laugh", "laughed"), ("sing", "sang"), ("shiver", "shivered"),
    ("hesitate", "hesitated"), ("return", "returned"), ("arrive", "arrived"), ("fall", "fell"),
    ("rise", "rose"), ("wander", "wandered"), ("pray", "prayed"), ("stumble", "stumbled"),
    ("whisper", "whispered"), ("smile", "smiled"), ("sigh", "sighed"), ("knock", "knocked"),
]
PREPOSITIONS = split_words("across along behind beside beyond into near over past through under")
TIMES = ["before dawn", "at noon", "late in the evening", "long after midnight",
         "on the third day", "the next morning", "in the grey hour before the tide turned",
         "just after the bells stopped", "at the turn of the year", "in the last week of October"]
SYLLABLES = split_words("""
an bel cor dal el fen gar hol is jor kel lan mor nor ost pel quin ros sal tam ul ver wen yl
zor bran cath dun fal gwen har iv lor mar nev orr pen ren sil tor vel wyn ash brae crag
""")


def zipf_choice(rng: random.Random, items: list[str], s: float = 1.05) -> str:
    """An item where early items are far more likely than late ones (rank-frequency law)."""
    n = len(items)
    u = rng.random()
    x = ((n + 1) ** (1 - s) - 1) * u + 1
    return items[min(n - 1, int(x ** (1 / (1 - s))) - 1)]


def invented_names(rng: random.Random, n: int) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        name = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice([2, 2, 3]))).capitalize()
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def plural(noun: str) -> str:
    if noun in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


class Prose:
    """Sentences for the novel: templates filled with Zipf-chosen words."""

    def __init__(self, rng: random.Random, places: int = 6_000) -> None:
        self.rng = rng
        # Each text gets its own ranking of the vocabulary, so their top words differ.
        self.nouns = rng.sample(NOUNS, len(NOUNS))
        self.mass = rng.sample(MASS_NOUNS, len(MASS_NOUNS))
        self.adjectives = rng.sample(ADJECTIVES, len(ADJECTIVES))
        self.adverbs = rng.sample(ADVERBS, len(ADVERBS))
        self.transitive = rng.sample(TRANSITIVE, len(TRANSITIVE))
        self.intransitive = rng.sample(INTRANSITIVE, len(INTRANSITIVE))
        self.people = invented_names(rng, 60)
        # Places with names: the long tail of words that occur once or twice.
        self.places = invented_names(rng, places)

    def noun(self) -> str:
        return zipf_choice(self.rng, self.nouns)

    def thing(self) -> str:
        """A noun phrase that can follow "the": singular, plural or a mass noun."""
        r = self.rng.random()
        if r < 0.15:
            return zipf_choice(self.rng, self.mass)
        return plural(self.noun()) if r < 0.35 else self.noun()

    def adj(self) -> str:
        return zipf_choice(self.rng, self.adjectives)

    def adverb(self) -> str:
        return zipf_choice(self.rng, self.adverbs)

    def person(self) -> str:
        return zipf_choice(self.rng, self.people, 1.3)

    def place(self) -> str:
        return zipf_choice(self.rng, self.places, 1.01)

    def verb(self) -> tuple[str, str, str]:
        return self.transitive[int(len(self.transitive) * self.rng.random() ** 2)]

    def moved(self) -> str:
        return self.intransitive[int(len(self.intransitive) * self.rng.random() ** 2)][1]

    def pronoun(self) -> str:
        return self.rng.choice(["he", "she", "they"])

    def sentence(self) -> str:
        r = self.rng
        templates: list[Callable[[], str]] = [
            lambda: f"{self.person()} {self.verb()[1]} the {self.adj()} {self.thing()} "
            f"{r.choice(PREPOSITIONS)} the {self.thing()}.",
            lambda: f"The {self.noun()} {self.moved()} {self.adverb()}, and "
            f"{self.pronoun()} {self.verb()[1]} the {self.thing()}.",
            lambda: f"It was {r.choice(TIMES)} when {self.person()} came to {self.place()}.",
            lambda: f"There was {article(self.adj())} {self.noun()} in the {self.noun()}, "
            f"{self.adj()} and {self.adj()}.",
            lambda: f"{self.pronoun().capitalize()} had never {self.verb()[2]} "
            f"{article(self.noun())} so {self.adj()}.",
            lambda: f'"{self.verb()[0].capitalize()} the {self.thing()}," said {self.person()}.',
            lambda: f'"Why is the {self.noun()} so {self.adj()} at {self.place()}?" '
            f"{self.person()} asked.",
            lambda: f"They {self.moved()} {r.choice(PREPOSITIONS)} {self.place()} and "
            f"{self.place()}, where the {plural(self.noun())} were {self.adj()}.",
            lambda: f"{self.person()} didn't {self.verb()[0]} the {self.thing()}; "
            f"it wasn't {self.adj()} enough.",
            lambda: f"{self.person()} {self.moved()} {self.adverb()} "
            f"{r.choice(PREPOSITIONS)} the {self.adj()} {self.noun()}.",
            lambda: f"Nobody in {self.place()} had {self.verb()[2]} the {self.thing()} "
            f"since the {self.adj()} {self.noun()} of {self.place()}.",
            lambda: f'"I {self.verb()[1]} it {r.choice(TIMES)}," {self.person()} said '
            f"{self.adverb()}, \"and I'd {self.verb()[0]} it again.\"",
            lambda: f"The {self.adj()} {self.noun()} smelled of {zipf_choice(r, self.mass)} "
            f"and {zipf_choice(r, self.mass)}.",
        ]
        return r.choice(templates)()

    def paragraph(self, most: int = 7) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(1, most)))


def novel(seed: int, chapters: int) -> str:
    rng = random.Random(seed)
    prose = Prose(rng)
    out = ["THE KEEPER OF VELMAR LIGHT", "", f"A Novel in {chapters} Chapters", "", ""]
    for number in range(1, chapters + 1):
        out += [f"CHAPTER {number}", "", f"{prose.place().upper()}", ""]
        for _ in range(rng.randint(50, 90)):
            out += textwrap.wrap(prose.paragraph(), width=72)
            out.append("")
        out.append("")
    out.append("THE END")
    return "\n".join(out) + "\n"


# --- reviews ------------------------------------------------------------------------------

PRODUCTS = [
    "Trailblazer 2 Tent", "Summit 45L Backpack", "Ridge Merino Socks", "Stormshell Jacket",
    "Alpine Down Vest", "Nomad Sleeping Bag", "Glow 300 Headlamp", "Canyon Water Filter",
    "Basecamp Stove", "Featherlite Trekking Poles", "Drift Camp Chair", "Harbor Rain Pants",
    "Crest Hiking Boots", "Lumen Lantern", "Ember Fire Starter", "Cascade Dry Bag 20L",
    "Tundra Insulated Mug", "Breeze Sun Hoody", "Pathfinder GPS Watch", "Cirrus Bivvy Bag",
]
PARTS = split_words("""
zipper strap seam buckle hood lid handle battery switch sole heel collar cuff pocket
drawcord toggle valve hinge clip mesh liner lining footbox baffle fly groundsheet peg guyline
""")
GOOD = split_words("""
sturdy comfortable light warm waterproof roomy bright quiet solid reliable breathable
compact packable durable cosy snug grippy stable
""")
BAD = split_words("""
flimsy heavy cold leaky scratchy cramped overpriced fiddly dim noisy stiff clammy wobbly
bulky sweaty fragile
""")
WHO = ["my partner", "my husband", "my wife", "my daughter", "my son", "my dad", "a friend",
       "the kids", "my hiking group", "my brother"]
WEATHER = ["in sideways rain", "in a heatwave", "at -8°C", "in thick fog", "in strong wind",
           "in wet snow", "through a thunderstorm", "in constant drizzle"]


class Reviewer:
    """Sentences for reviews: the product, its parts, trips to invented places, other brands."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.places = invented_names(rng, 4_000)
        self.brands = invented_names(rng, 300)

    def place(self) -> str:
        return zipf_choice(self.rng, self.places, 1.01)

    def trip(self) -> str:
        r = self.rng
        return r.choice([
            f"a weekend at {self.place()}", f"{r.randint(2, 9)} nights on the {self.place()} Way",
            f"a wet week in {self.place()}", f"the {self.place()} Horseshoe",
            f"a festival near {self.place()}", f"two months of commuting to {self.place()}",
            f"our family trip to {self.place()} Lake", f"a crossing of the {self.place()} Hills",
        ])

    def sentence(self, product: str, rating: int) -> str:
        r = self.rng
        part, good, bad = r.choice(PARTS), r.choice(GOOD), r.choice(BAD)
        who, weather, trip = r.choice(WHO), r.choice(WEATHER), self.trip()
        common = [
            f"Used it on {trip}.",
            (f"For reference I'm {r.randint(5, 6)}'{r.randint(0, 11)}\" and about "
             f"{r.randint(50, 110)} kg."),
            "The colour is a bit different from the photos.",
            f"Bought it to replace my old {r.choice(self.brands)}.",
            f"Tested it {weather}.",
            f"{who.capitalize()} has the previous version.",
        ]
        happy = [
            f"Took it on {trip} and it was {good} the whole time.",
            f"Really {good}, and the {part} feels like it will last.",
            f"Much more {good} than my old {r.choice(self.brands)}.",
            f"{who.capitalize()} liked it so much we bought a second one.",
            f"Arrived in {r.randint(1, 4)} days, well packed.",
            f'It says "{good}" on the label and for once that\'s true.',
            f"Stayed {good} {weather}, which is exactly what I wanted.",
        ]
        middling = [
            f"It does the job, but the {part} is {bad}.",
            f"Fine for the price; I wouldn't take it on anything longer than {trip}.",
            f"Not as {good} as the other reviews made out.",
            f"Customer service were helpful when I asked about the {part}.",
            f"A bit {bad} {weather}, otherwise fine.",
        ]
        unhappy = [
            f"The {part} broke on {trip}, which was not fun.",
            f"Honestly {bad}; I expected more from the {product}.",
            f"Sent it back and the refund took {r.randint(2, 6)} weeks.",
            f'Don\'t believe the "{good}" claim, mine was {bad} from day one.',
            f"Second one where the {part} failed, so that's it for me.",
            f"{who.capitalize()} gave up on it {weather}.",
        ]
        pools = {5: happy, 4: happy + middling, 3: middling, 2: middling + unhappy, 1: unhappy}
        return r.choice(pools[rating] * 2 + common)

    def body(self, product: str, rating: int) -> str:
        r = self.rng
        sentences = [self.sentence(product, rating) for _ in range(r.randint(1, 8))]
        body = " ".join(dict.fromkeys(sentences))
        if r.random() < 0.15:
            later = {5: "still going strong.", 4: "still happy with it.", 3: "no change.",
                     2: f"the {r.choice(PARTS)} has gone too.", 1: "still waiting for a reply."}
            body += f"\n\nUpdate after {r.choice(['a month', 'six weeks', 'a year'])}: "
            body += later[rating]
        return body


TITLES = {
    5: ["Excellent", "Love it!", "Best purchase this year", "Five stars", "Brilliant kit",
        "Exactly what I needed", "Superb"],
    4: ["Very good", "Great, with one niggle", "Solid choice", "Would buy again", "Good value"],
    3: ["OK", "Does the job", "Mixed feelings", "Average", "Fine for the price"],
    2: ["Disappointed", "Not great", "Expected better", "Meh"],
    1: ["Avoid", "Broke immediately", "Waste of money", "Returned it", "Rubbish"],
}


def reviews(seed: int, n: int) -> str:
    rng = random.Random(seed)
    reviewer = Reviewer(rng)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "product", "rating", "date", "title", "body"])
    day = date(2023, 1, 1)
    for i in range(n):
        rating = rng.choices([5, 4, 3, 2, 1], weights=[46, 24, 12, 8, 10])[0]
        product = zipf_choice(rng, PRODUCTS, 1.2)
        if rng.random() < 0.25:
            day += timedelta(days=1)
        writer.writerow([f"R{10_000 + i}", product, rating, day.isoformat(),
                         rng.choice(TITLES[rating]), reviewer.body(product, rating)])
    return out.getvalue()


# --- forum export -------------------------------------------------------------------------

USERS = ["trailmix_tom", "Ines.R", "bothy_bagger", "kettle", "NorthFaceNiamh", "ultralight_ulf",
         "mapreader", "Jörg", "wet_feet", "Chloé-M", "grit&gravel", "Old Pete", "munro_mo"]


class Poster:
    """Forum chatter: questions, agreement, gear opinions, trip reports, the odd tall tale."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.reviewer = Reviewer(random.Random(seed + 1))
        self.prose = Prose(random.Random(seed + 2), places=3_000)

    def chat(self, previous_user: str) -> str:
        r = self.rng
        product = r.choice(PRODUCTS)
        return r.choice([
            f"Has anyone tried the {product} {r.choice(WEATHER)}?",
            f"+1 to what {previous_user} said.",
            f"I'd go for the {product} - the {r.choice(PARTS)} alone is worth it.",
            (f"We did {self.reviewer.trip()} last {r.choice(['May', 'June', 'September'])} "
             "and it rained every single day."),
            (f"Honestly, don't overthink it: {r.choice(GOOD)} beats {r.choice(GOOD)} "
             "every time."),
            f"Which {r.choice(PARTS)} does it have, the old one or the new one?",
            f"My {product} is {r.randint(2, 9)} years old and still {r.choice(GOOD)}.",
            f"Thanks {previous_user}, that's really useful.",
        ])

    def paragraph(self, previous_user: str) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(2, 8)):
            r = rng.random()
            if r < 0.45:
                parts.append(self.chat(previous_user))
            elif r < 0.85:
                parts.append(self.reviewer.sentence(rng.choice(PRODUCTS), rng.randint(1, 5)))
            else:
                parts.append(self.prose.sentence())
        text = " ".join(parts)
        if rng.random() < 0.1:
            text += f" Photos: https://forum.example.org/t/{rng.randint(1000, 9999)}/"
        return text


def forum(seed: int, posts: int) -> str:
    poster = Poster(seed)
    rng = poster.rng
    out = ["Thread: Which tent for a wet week in the Highlands?", ""]
    when = date(2024, 2, 3)
    previous_user, previous_text = "mapreader", ""
    for number in range(1, posts + 1):
        user = rng.choice([u for u in USERS if u != previous_user])
        if rng.random() < 0.3:
            when += timedelta(days=1)
        out.append(f"#{number} - {user} - {when.isoformat()} "
                   f"{rng.randint(6, 23):02d}:{rng.randint(0, 59):02d}")
        if previous_text and rng.random() < 0.3:
            quoted = previous_text[: rng.randint(40, 160)]
            out.append(f"> {previous_user} wrote: {quoted}\u2026")
        paragraphs = [poster.paragraph(previous_user) for _ in range(rng.randint(1, 4))]
        # Copied out of a browser: typographic apostrophes, dashes and ellipses.
        for text in paragraphs:
            out.append(text.replace("'", "\u2019").replace(" - ", " \u2014 "))
        out += ["", "-" * 40, ""]
        previous_user, previous_text = user, paragraphs[-1]
    return "\r\n".join(out) + "\r\n"


# --- support tickets (holdout) ------------------------------------------------------------

QUEUES = ["network", "accounts", "hardware", "email", "software", "printing"]
SUBJECTS = {
    "network": ["VPN drops every few minutes", "Wi-Fi slow on floor {floor}",
                "Can't reach the intranet", "No network in meeting room {room}"],
    "accounts": ["Locked out after password change", "Need access to the {team} share",
                 "MFA codes not arriving", "New starter account for {person}"],
    "hardware": ["Laptop won't charge", "Second monitor flickers", "Docking station dead",
                 "Keyboard missing keys"],
    "email": ["Mailbox full", "Calendar invites missing", "Shared mailbox not syncing",
              "Emails to {company} bouncing"],
    "software": ["Excel crashes on open", "Licence expired for {app}", "Update stuck at {pct}%",
                 "{app} won't start"],
    "printing": ["Printer on floor {floor} jams", "Can't add printer {host}",
                 "Scans not arriving by email"],
}
TICKET_LINES = [
    "Started this morning after the update.", "It worked fine yesterday.",
    "I've already restarted twice.", 'Error message says "access denied (0x80070005)".',
    "Other people on my team have the same problem.", "This is blocking the month-end report.",
    "Tried a different cable, no change.", "Can someone call me on extension {ext}?",
    "Happens on both the office network and at home.", "Screenshot attached.",
    "I'm working from the {city} office this week.", "Urgent, client demo at {hour}:00.",
    "Asset tag {host}, running Windows 11 23H2.", "{person} from {team} said to raise a ticket.",
    "The error code is {code}.", "Please escalate, this is the third ticket about it.",
]
APPS = ["AutoCAD", "SAP GUI", "Teams", "Outlook", "Tableau", "PowerBI", "Zoom", "Slack",
        "Visual Studio", "Citrix Workspace"]
TEAMS = ["finance", "payroll", "legal", "marketing", "logistics", "procurement", "design"]
CITIES = ["Leeds", "Bristol", "Glasgow", "Cardiff", "Belfast", "Norwich", "York"]


def tickets(seed: int, n: int) -> str:
    rng = random.Random(seed)
    people = invented_names(rng, 2_500)
    companies = invented_names(rng, 400)

    def fill(text: str) -> str:
        return text.format(
            floor=rng.randint(1, 9), room=f"{rng.randint(1, 9)}.{rng.randint(1, 30):02d}",
            team=rng.choice(TEAMS), person=zipf_choice(rng, people, 1.01),
            company=f"{zipf_choice(rng, companies)} Ltd", app=rng.choice(APPS),
            pct=rng.randint(1, 99), host=f"LT-{rng.randint(10_000, 99_999)}",
            ext=rng.randint(2000, 2999), city=rng.choice(CITIES), hour=rng.randint(9, 17),
            code=f"0x{rng.randint(0, 0xFFFFFFFF):08X}",
        )

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["ticket", "queue", "priority", "opened", "subject", "description"])
    day = date(2024, 1, 8)
    for i in range(n):
        queue = rng.choice(QUEUES)
        if rng.random() < 0.1:
            day += timedelta(days=1)
        text = " ".join(fill(line) for line in rng.sample(TICKET_LINES, k=rng.randint(1, 6)))
        if rng.random() < 0.3:
            text += f"\n\nThanks,\n{zipf_choice(rng, people, 1.01)}"
        writer.writerow([f"INC{40_000 + i}", queue, rng.choice(["P1", "P2", "P3", "P3", "P4"]),
                         day.isoformat(), fill(rng.choice(SUBJECTS[queue])), text])
    return out.getvalue()


FILES: dict[str, Callable[[], str]] = {
    "novel.txt": lambda: novel(seed=1851, chapters=28),
    "reviews.csv": lambda: reviews(seed=2023, n=2_500),
    "forum-export.txt": lambda: forum(seed=2024, posts=350),
    "holdout/tickets.csv": lambda: tickets(seed=77, n=3_000),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for name, build in FILES.items():
        data = build().encode("utf-8")
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        lines = data.count(b"\n")
        print(f"wrote {path.relative_to(HERE)}: {lines} lines, {len(data)} bytes")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
