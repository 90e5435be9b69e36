"""The offline rules' lexicon: the small English word lists the patterns consult.

Month and weekday names come from python-dateutil's parser tables, not from lists of our own.
"""

from __future__ import annotations

import re

from dateutil.parser import parserinfo

_CALENDAR = parserinfo()
MONTH_WORDS = frozenset(name.lower() for names in _CALENDAR.MONTHS for name in names)  # "sept", "may"
WEEKDAY_WORDS = frozenset(names[-1].lower() for names in _CALENDAR.WEEKDAYS)  # full names only

NUMBER_WORDS = {
    **{
        w: n
        for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
    },
    **{"a": 1, "an": 1, "a couple of": 2, "couple of": 2},
}

DEMONYMS = frozenset(
    """american british english scottish welsh irish canadian australian german french italian spanish
    portuguese brazilian mexican argentinian argentine chilean colombian peruvian cuban dutch belgian
    swiss austrian swedish norwegian danish finnish icelandic polish czech slovak hungarian romanian
    bulgarian greek turkish russian ukrainian chinese japanese korean vietnamese thai indian pakistani
    bangladeshi nepali filipino indonesian malaysian singaporean egyptian moroccan nigerian kenyan
    ethiopian ghanaian african european asian latino latina hispanic israeli iranian iraqi lebanese
    syrian saudi emirati jewish muslim christian catholic protestant hindu buddhist sikh atheist
    agnostic vegan vegetarian""".split()
)

# Capitalised words that are never a person's name (sentence starters, adjectives, time words).
NOT_NAMES = (
    frozenset(
        """i i'm me my the a an and or but so not no yes sure sorry fine good great ok okay just here there
    back glad happy sad tired ready afraid still also really very excited interested looking going trying
    thinking done hungry new currently actually always never well busy free available home sick late
    early curious confused worried planning working moving living staying travelling traveling
    today tomorrow yesterday tonight now then later soon this that these those it he she they we you
    his her their our your who what when where why how which hi hello hey thanks thank please dear
    mr mrs ms dr sir madam asap maybe probably definitely totally kind sort bit lot little pretty
    quite more most less least all any some every each both either neither one two three first last
    next other another same such only even again already almost about around over under into onto
    from with without within of in on at to for by as if unless because since until while after
    before during between among through across ai assistant bot user human team everyone nobody
    somebody someone anyone name names married single divorced retired unemployed pregnant allergic
    vegan vegetarian gluten lactose""".split()
    )
    | WEEKDAY_WORDS
    | MONTH_WORDS
    | DEMONYMS
)

# Words that cannot open a noun phrase worth keeping ("I like it", "I love that").
NP_STOP_FIRST = frozenset(
    """to it that this these those them you your yours him her how what when where which who the idea
    the sound the way the plan the suggestion the option the first the second the third the last the other
    option both all none either neither one a lot lots so very too much more most it's that's being
    having doing getting if about whether just really there here""".split()
)

OCCUPATIONS = frozenset(
    """engineer developer programmer designer teacher nurse doctor physician surgeon dentist lawyer attorney
    accountant architect scientist researcher professor lecturer student manager consultant analyst writer
    author journalist editor photographer artist musician chef cook baker pilot driver mechanic electrician
    plumber carpenter farmer pharmacist therapist psychologist psychiatrist veterinarian vet firefighter
    paramedic officer soldier librarian translator interpreter salesperson entrepreneur founder ceo cto cfo
    coo director economist statistician mathematician physicist chemist biologist technician administrator
    intern freelancer contractor recruiter marketer banker trader investor realtor waiter waitress bartender
    barista cashier clerk secretary tutor coach trainer instructor principal judge nanny caregiver
    midwife optometrist paralegal surveyor geologist astronomer actor actress dancer singer composer
    producer filmmaker animator illustrator copywriter blogger youtuber streamer podcaster strategist
    planner scheduler dispatcher courier miner welder machinist butcher tailor hairdresser barber
    florist gardener landscaper janitor housekeeper receptionist auditor underwriter actuary
    epidemiologist nutritionist dietitian physiotherapist counselor counsellor pastor priest rabbi imam
    sailor fisherman policeman policewoman detective guard steward stewardess attendant postdoc
    lead architect specialist associate partner owner operator""".split()
)
NOT_OCCUPATION_MODIFIERS = frozenset(
    "former ex retired aspiring wannabe future would-be failed huge big great terrible bad good fan".split()
)

# Car makes: "I own a Kia Niro" is a car only when the make is one (owning a Labrador is not).
CAR_MAKES = frozenset(
    """toyota volkswagen vw tesla honda ford renault skoda fiat volvo kia hyundai bmw audi mercedes
    mercedes-benz porsche peugeot citroen citroën opel vauxhall nissan mazda subaru mitsubishi suzuki
    seat dacia jeep chevrolet chevy dodge ram gmc cadillac buick lexus acura infiniti jaguar land
    range mini alfa lancia saab polestar rivian lucid byd cupra smart""".split()
)

# What a user says -> the diet stored.
DIETS = {d: d for d in "vegetarian vegan pescatarian gluten-free keto kosher halal teetotal".split()} | {
    "pescetarian": "pescatarian",
    "gluten free": "gluten-free",
    "lactose intolerant": "lactose intolerant",
    "lactose-intolerant": "lactose intolerant",
}

LANGUAGES = frozenset(
    """english portuguese spanish french german italian dutch swedish norwegian danish finnish polish czech
    russian ukrainian greek turkish arabic hebrew hindi urdu bengali punjabi tamil telugu mandarin cantonese
    chinese japanese korean vietnamese thai indonesian malay tagalog swahili romanian hungarian catalan
    basque galician irish welsh latin persian farsi""".split()
)

# Relations: the word a user says -> (normalised relation, memory attribute). Spouse-like relations
# are single-valued "<relation> name" facts; children, pets and friends can be many at once, so they
# use the multi-valued attributes the memory keys know ("children", "pets", "friends").
_SAME_AS = {"mom": "mother", "mum": "mother", "dad": "father", "fiance": "fiancé", "fiancee": "fiancée"}
_SAME_AS |= {"kid": "child", "puppy": "dog", "kitten": "cat"}
_NAMED = "wife husband partner spouse boyfriend girlfriend fiancé fiancée mother father boss manager brother sister"
RELATIONS: dict[str, tuple[str, str]] = {
    **{w: (w, f"{w} name") for w in [*_NAMED.split(), "best friend"]},
    **{w: (w, "children") for w in "son daughter child".split()},
    **{w: (w, "pets") for w in "dog cat rabbit parrot hamster pet".split()},
    "friend": ("friend", "friends"),
}
RELATIONS |= {word: RELATIONS[same] for word, same in _SAME_AS.items()}
RELATION_ALT = "|".join(re.escape(w) for w in sorted(RELATIONS, key=len, reverse=True))

# Past-tense event verbs -> whether the verb alone is a clear event ("went") or needs a time phrase ("had").
EVENT_VERBS: dict[str, bool] = {
    **dict.fromkeys(
        """went visited attended met moved flew travelled traveled drove hiked celebrated completed graduated
        joined won returned arrived quit launched adopted married hosted organized organised explored toured
        camped cycled biked swam skied surfed volunteered presented performed climbed finished ran""".split(),
        True,
    ),
    **dict.fromkeys(
        "had started saw watched bought took got cooked baked spent played tried left passed lost sold gave made did".split(),
        False,
    ),
}

# Verbs that keep their form after "he/she" ("I went" -> "Ana went", "I can" -> "Ana can").
NO_THIRD_PERSON_S = frozenset(
    """was had did could would should will can may might must shall used went saw met took got made ran
    flew drove ate drank bought brought thought found gave left lost came became began won wrote spent sent
    kept felt told sold paid heard knew swam sang sat stood slept woke wore chose broke spoke rode put cut
    hit let set read""".split()
)

# Imperative verbs that open a procedure step ("Preheat the oven", "Click Save").
IMPERATIVES = frozenset(
    """add adjust apply arrange arrive ask attach bake beat blend boil book bring brown brush buy calculate
    call cancel check chill chop choose clean clear click close combine compare complete configure confirm
    connect contact cook cool copy cover crack create crush cut decide delete deploy dice dip disable
    disconnect discard dissolve divide download drain drink drizzle drop dry edit email enable enter
    export fill find fix flip fold follow fry garnish get give go grab grate grease grill heat hold
    import install keep knead label lay leave let line list load lock log look lower make marinate
    mash measure melt merge mince mix move navigate note open order pack paste pay peel pick pin place
    plug pour prepare press print pull push put rinse read reboot record reduce refresh register reload
    remove rename repeat replace request reset restart return review roast roll rub run salt save scan
    schedule scroll season select send serve set shake share shut sift simmer slice soak sort spread
    sprinkle squeeze start steam stir stop store strain submit swap switch take taste test tighten toast
    toss transfer trim turn type unlock unplug update upload use verify visit wait warm wash watch weigh
    whisk wipe wrap write""".split()
)

# Words that cannot be a defined term ("This means ...", "Note: ...").
NOT_TERMS = frozenset(
    """this that it which what who he she they there here all everything nothing i we you my your our
    his her their its one which-means so and but then also just well now today tomorrow yesterday
    note tip warning update edit answer question example total time ps ingredients result""".split()
)

# Abbreviations that end in a dot without ending the sentence.
ABBREVIATIONS = frozenset(
    "e.g. i.e. dr. mr. mrs. ms. st. vs. approx. a.k.a. jr. sr. no. fig. mt. prof.".split()
)


# Attributes that hold many values at once ("likes", "languages"): the semantic rules propose each value
# as a fact of cardinality "many" (its own memory, never an update of another).
MULTI_VALUED = frozenset(
    "likes dislikes interests hobbies hobby allergy allergies skills languages pets friends children "
    "visited goals plans note notes".split()
)
