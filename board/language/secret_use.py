"""A secret read by its FORM and its USE, in English and the Indian languages people mix into it (round secrets47).

Word lists of secrets' names grow with every writer and still miss the next one; what every secret shares is a form
(a short run of digits, a card's grouping, an authenticator's base32 seed) and a use (it is typed, pressed or said to
open something, it arrives to prove it is you, it is kept from others). This module owns those readings; the rest
of the filter (:mod:`board.language.secrets`) calls :func:`use_reason` on a value and :func:`event_only` before its
key rules, and reads masked and record numbers out with :func:`masked_out` and :func:`records_out`.

Each principle is stated where it is applied. The languages read: English, Hindi / Hinglish, Bengali, Tamil, Telugu,
Kannada, Malayalam, Marathi, Gujarati and Punjabi, all in Latin script (what a chat model writes down); later rounds
added tables of other languages' words (principles 13 and 22) and principles that need no words: a token's shape beside
a verb of getting in, a code right after a device's name, a verification code's form, an ID's checksum (round
secrets50: principles 18 to 22, :func:`secrets50_reason`; round secrets51: principles 23 to 28,
:func:`secrets51_reason`, :func:`seed_tail`, with their larger patterns compiled on first use by :class:`Lazy`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

__all__ = ["DIGIT_WORDS", "HASH_WORDS", "STAR_WORDS", "TENS_WORDS", "bip39_share", "card_code", "event_only",
           "form_reason", "masked_out", "native_to_latin",
           "numbered_seed", "records_out", "secrets50_reason", "talk_only", "use_reason"]

#: Digits said as words, in every language read here (English "nine three", Hindi "ek do teen", Bengali "ek dui tin",
#: Tamil "onnu rendu moonu", Telugu "okati rendu moodu", Kannada "ondu eradu mooru", Malayalam "onnu randu moonnu",
#: Marathi "ek don teen", Gujarati "ek be tran", Punjabi "ikk do tinn"). A code read aloud is the code; three or more
#: such words must run together (:func:`board.language.secrets.spoken_digits`), so one "do" or "be" stays a word.
DIGIT_WORDS: dict[str, str] = {
    # English and a keypad's doubling
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "double": "double", "triple": "triple",
    # Hindi, Marathi, Gujarati, Punjabi
    "shunya": "0", "shoonya": "0", "ek": "1", "ikk": "1", "do": "2", "don": "2", "be": "2", "teen": "3", "tran": "3",
    "tinn": "3", "char": "4", "chaar": "4", "paanch": "5", "panch": "5", "pach": "5", "paach": "5", "panj": "5",
    "chhe": "6", "che": "6", "chha": "6", "saha": "6", "saat": "7", "satt": "7", "aath": "8", "atth": "8", "nau": "9",
    "nav": "9",
    # Bengali
    "shunno": "0", "sunno": "0", "dui": "2", "tin": "3", "chhoy": "6", "choy": "6", "sat": "7",
    "aat": "8", "noy": "9",
    # Tamil, Malayalam
    "poojyam": "0", "pujyam": "0", "onnu": "1", "ondru": "1", "rendu": "2", "randu": "2", "irandu": "2",
    "moonu": "3", "moonnu": "3", "moondru": "3", "naalu": "4", "naangu": "4", "anju": "5", "anchu": "5",
    "aindhu": "5", "aaru": "6", "ezhu": "7", "ettu": "8", "onbadhu": "9", "ombadhu": "9", "onpathu": "9",
    # Telugu
    "sunna": "0", "okati": "1", "okka": "1", "moodu": "3", "naalugu": "4", "aidu": "5", "edu": "7", "yedu": "7",
    "enimidi": "8", "tommidi": "9",
    # Kannada
    "sonne": "0", "ondu": "1", "eradu": "2", "mooru": "3", "naalku": "4", "elu": "7", "yelu": "7", "entu": "8",
    "yentu": "8", "ombattu": "9",
}
# Round secrets50 (principle 22): the digits of more languages, one table, read as the rest ("jeden dwa trzy cztery"):
# Polish, Spanish, Italian, French, German, Dutch, Portuguese, Turkish, Swahili, Czech, Bahasa, Russian and
# Ukrainian in Latin script. A word two languages share keeps one value (Czech and Russian "dva" is 2 in both).
DIGIT_WORDS.update({
    "jeden": "1", "jedna": "1", "dwa": "2", "dwie": "2", "trzy": "3", "cztery": "4", "pięć": "5", "piec": "5",
    "sześć": "6", "szesc": "6", "siedem": "7", "osiem": "8", "dziewięć": "9", "dziewiec": "9",
    "cero": "0", "uno": "1", "una": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6",
    "siete": "7", "ocho": "8", "nueve": "9",
    "due": "2", "tre": "3", "quattro": "4", "cinque": "5", "sei": "6", "sette": "7", "otto": "8", "nove": "9",
    "zéro": "0", "un": "1", "une": "1", "deux": "2", "trois": "3", "quatre": "4", "cinq": "5", "sept": "7",
    "huit": "8", "neuf": "9",
    "null": "0", "eins": "1", "zwei": "2", "drei": "3", "vier": "4", "fünf": "5", "funf": "5", "sechs": "6",
    "sieben": "7", "acht": "8", "neun": "9", "nul": "0", "twee": "2", "drie": "3", "vijf": "5", "zes": "6",
    "zeven": "7", "negen": "9",
    "dois": "2", "duas": "2", "três": "3", "sete": "7", "oito": "8",
    "s\u0131f\u0131r": "0", "sifir": "0", "bir": "1", "iki": "2", "üç": "3", "uc": "3", "dört": "4", "dort": "4",
    "beş": "5",
    "bes": "5", "alt\u0131": "6", "alti": "6", "yedi": "7", "sekiz": "8", "dokuz": "9",
    "sifuri": "0", "moja": "1", "mbili": "2", "tatu": "3", "nne": "4", "tano": "5", "sita": "6", "saba": "7",
    "nane": "8", "tisa": "9",
    "nula": "0", "dva": "2", "tři": "3", "tri": "3", "čtyři": "4", "ctyri": "4", "pět": "5", "pet": "5", "šest": "6",
    "sest": "6", "sedm": "7", "osm": "8", "devět": "9", "devet": "9",
    "nol": "0", "satu": "1", "dua": "2", "tiga": "3", "empat": "4", "lima": "5", "enam": "6", "tujuh": "7",
    "delapan": "8", "sembilan": "9",
    "odin": "1", "chetyre": "4", "pyat": "5", "shest": "6", "sem": "7", "vosem": "8", "devyat": "9",
})
#: A dial's numbers said in words (principle 22): English teens and tens ("twenty-two, fourteen, and then, uh,
#: ninety"). A tens word before a digit's word is one number ("thirty-one").
TENS_WORDS: dict[str, int] = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
#: A keypad's hash and star keys said in words, in the languages of the table: "jeden dwa trzy cztery, krzyżyk" is
#: "1234#".
HASH_WORDS = (r"hash|pound|krzy[żz]yk|kratka|di[èe]se|almohadilla|cancelletto|raute|hekje|kare|tanda\s+pagar|"
              r"jogo\s+da\s+velha")
STAR_WORDS = r"star|asterisk|gwiazdka|[ée]toile|asterisco|sternchen|stern|sterretje|y[\u0131i]ld[\u0131i]z|bintang"

#: A code of digits as people write one down: joined ("190388"), single digits spaced, dashed or dotted ("5 5 1 2",
#: "0-6-1-5", "4-4-0"), or in two halves as an SMS shows it ("093 551"). Three to eight digits: fewer is a count,
#: more a phone, an account or a card (read by their own rules).
_CODE = re.compile(r"(?<![\w.,/:₹$€£])(?<!\d[ -])(?:\d(?:[ .-]\d){2,7}|\d{3} \d{3}|\d{3,8}|"
                   # single digits listed, one per wheel: "3 wheels on 0, 7 and 2"
                   r"\d(?:\s*,\s*\d){1,6}\s*,?\s+(?:and|aur|then|phir)\s+\d|"
                   # a dial's numbers in dashed pairs: "45-12-33"
                   r"\d\d(?:-\d\d){2,3})(?![\w/:]|[.,]\d)"
                   # a group beside another group is part of a phone's or an account's number: "98450 12345"
                   r"(?![ -]\d)")
#: What makes a run of digits a quantity, a time, a price or a date, not a code: a unit after it, a currency or a
#: clock before it, a month beside it.
_NOT_CODE_AFTER = re.compile(
    r"^\s*(?:%|rs\b|rupees?|inr|dollars?|bucks|/-|k\b|lakh|lakhs|crore|cr\b|km|kms|kg|kgs|gb|mb|tb|mah|ml|l\b|"
    r"litres?|liters?|hours?|hrs?|days?|din|weeks?|months?|mahine|years?|saal|yrs?|mins?|minutes?|seconds?|secs?|"
    r"pm|am|baje|o'?clock|words?|steps?|calories|people|log|members|users|points|runs|followers|likes|pages|"
    r"sq\.?\s*ft|sqft|feet|ft|metres?|meters?|units?|pieces?|pcs|items?|times|se\s+zyada|"
    # weights and measures of the kitchen, and money named after its amount ("15000 deposit", "2450 ka liya")
    r"g|gm|gms|grams?|cups?|katori|spoons?|tbsp|tsp|packets?|boxes|bonus|cashback|refund|salary|deposit|advance|"
    r"discount|tip|interest|dividend|premium|emi|off|only|loss|profit|(?:ka|ki|ke|mein|me)\s+(?:liya|li|le|mila|mili|"
    r"kharid\w*|pada|padi|bika|biki|becha|bonus|refund|cashback))\b",
    re.IGNORECASE)
#: Words naming a record, a person's or a thing's number (Principle 3: "policy no. 2311 4455 6677", "employee 104562",
#: "ticket 55678"): what follows them is the record's number, not a code. One list, read for codes and for long numbers.
RECORD_WORDS = (r"policy|order|invoice|ticket|pnr|booking|consumer|customer|folio|claim|receipt|tracking|awb|challan|"
                r"reference|ref|registration|reg|complaint|application|roll|enrol(?:l?ment)?|member(?:ship)?|"
                r"employee|emp|staff|student|case|request|sr|incident|batch|bill|meter")
_NOT_CODE_BEFORE = re.compile(
    r"(?:\b(?:" + RECORD_WORDS + r"|rs|inr|usd|eur|price|cost|costs|costing|paid|pay|fee|fees|rent|salary|emi|"
    r"score[ds]?|scored|in|since|"
    # money given, lost or owed, and what something was bought for: "lost 5000", "bought it for 2450"
    r"for|worth|bought|sold|lost|won|spent|earned|saved|gave|borrowed|lent|owes?|udhaar|"
    r"year|till|until|by|from|of|at|flat|room|house|plot|bus|route|train|flight|platform|gate|seat|row|ward|"
    r"sector|block|batch|class|no\.?|number|#|ext|extension|version|v|model|series|iphone|galaxy|pixel|top|"
    r"dial|call|helpline|emergency|bib|jersey|roll|token|booth|stall|table|counter|bay|slot|bed|the|a|this|last|"
    # round secrets50: a port is a host's door number, not its code ("Grafana opens on port 3000")
    r"port|ports|"

    r"next|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|"
    r"april|june|july|august|september|october|november|december)\.?|[₹$€£])\s*$",
    re.IGNORECASE)


#: A year is a date when a word of time sits after it, in any language read here ("2019 mein", "2019 se", "2019
#: tak", Tamil "2019-la", Marathi "2019 madhe", Gujarati "2019 ma"), or it is the year of a thing ("2019 model").
_YEAR_AFTER = re.compile(r"^\s*-?(?:mein|me|se|tak|la|il|ill|lo|alli|madhe|madhye|ma|maa|thi|batch|model|edition|"
                         r"season|election|olympics|world\s+cup|onwards|ke\s+baad|se\s+pehle)\b", re.IGNORECASE)


#: A lock's number is its combination ("disc lock ka number 8 1 8"), where a locker's, a room's or a flat's number is
#: the place.
_LOCK_NUMBER = re.compile(r"\b(?:lock|padlock|taa?laa?|combination|combo)\s+(?:ka|ki|ke|da|cha|chi|no|nu|'s|of)?\s*"
                          r"(?:number|no)\.?\s*[:#-]?\s*$", re.IGNORECASE)


#: What an app or a lock asks for is its code ("the Airtel app asks for 7 1 7 1"), where "bought for 2450" is a price.
_ASKED_FOR = re.compile(r"\b(?:asks?|asked|asking|prompts?|wants)\s+(?:me\s+|you\s+)?for\s*$", re.IGNORECASE)


def codes(text: str, numbered: bool = False) -> list[str]:
    """The runs of digits in ``text`` that may be a code (see :data:`_CODE`): not a quantity, a time, a price, a
    year said as a date, a place's or a thing's number (unless ``numbered``: a number kept from others or received
    by SMS is a code whatever calls it a number)."""
    found = []
    for match in _CODE.finditer(text):
        before = text[:match.start()]
        numbered_here = numbered and re.search(r"\b(?:number|no|#)\.?\s*[:#-]?\s*$", before, re.IGNORECASE)
        if _NOT_CODE_AFTER.match(text[match.end():]) or (_NOT_CODE_BEFORE.search(before) and
                                                          not _LOCK_NUMBER.search(before) and not numbered_here and
                                                          not _ASKED_FOR.search(before)):
            continue
        if re.fullmatch(r"(?:19|20)\d\d", match.group(0)) and _YEAR_AFTER.match(text[match.end():]):
            continue
        found.append(re.sub(r"\D", "", match.group(0)))
    return found


#: A word that is a password by its shape with no digit in it: two words of letters joined by a symbol inside, one
#: of them capitalised ("Tuesday!Rain", "Ghar#Wala"); "AT&T", "R&D" and "Q&A" are names.
_JOINED_BY_SYMBOL = re.compile(r"(?<![\w@])(?=\w*[A-Z])[A-Za-z]{3,}[!#$%^*~][A-Za-z]{2,}\w*")
#: A made-up word with letters and digits ("rahul1234", "priya2010"): a password when it is what one types to get in.
_MIXED_WORD = re.compile(r"(?<![\w@.])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z]{2,}[\w!@#$%^&*]*\d[\w!@#$%^&*]*")

# Principle 1: a code given for opening, entering or unlocking something is a secret, whatever names it. The verbs
# of that use, in every language read here (English "open", "unlock", "type", "key in", "press", "enter", "join",
# "asks for"; Hindi "kholna / khulta", "daalo", "dabana", "ghumana", "lagao"; Bengali "kholar", "tipo"; Tamil
# "thirakka", "podanum", "adikkanum", "press pannunga"; Telugu "teruvu", "kottali", "nokku"; Kannada "tereyoke",
# "otti", "haaku"; Malayalam "thurakkan", "adikkanam"; Marathi "ughadayla", "daba", "taak"; Gujarati "kholva",
# "dabavo", "nakho"; Punjabi "khulda", "dabao"). "dial" and "call" are left out: 100 and 112 are dialled.
_USE = re.compile(
    r"\b(?:open(?:s|ed|ing)?|unlock\w*|type[ds]?|typing|key(?:s|ed)?\s+in|punch(?:es|ed)?\s+in|press(?:es|ed)?|"
    r"enter(?:s|ed)?|input|tap(?:s|ped)?\s+in|log(?:s|ged)?\s+in|login|sign\s+in|get\s+in(?:to)?|gets\s+in|"
    r"join(?:s|ed)?|connect(?:s|ed)?|asks?\s+for|asked\s+for|disarm\w*|"
    r"khol\w*|khul\w*|daal\w*|dal(?:o|na|ke|en)|dab(?:a|ao|ana|aa|av\w*|aiye)|ghum\w*|lagao|lagana|"
    r"tipo|tipun|tipe|thira\w*|thura\w*|pod(?:u|anum|unga|ungal)|potta|adi(?:kk\w*|chu)|pannu\w*|"
    r"teru\w*|tere\w*|kott\w*|nokk\w*|ott(?:u|i|idre)|haak\w*|ughad\w*|daba|taak\w*|taka|nakh\w*|"
    r"dabao|karne\s+ke\s+liye|cheyy\w*|"
    # round secrets50: Sinhala "arinna" (to open), "gahanna" (to press, type), Urdu "kholne", as the rest of the table
    r"arinn\w*|arina|gahann\w*|gahapan)\b",
    re.IGNORECASE)
#: What is locked by a code, in any language: a lock, a padlock, a combination, a "taala", Tamil "poottu", Marathi
#: "kulup", Kannada "beega"; a parental, screen-time or restriction lock (principle 6: a code that keeps children
#: out is a passcode); a safe, a "tijori", a locker.
_LOCKED = re.compile(
    r"\b(?:locks?|padlocks?|number\s+lock|combination|combo|taa?laa?|poottu|pootu|kulup|beega|"
    r"parental|screen\s*time|restrictions?|child\s+lock|kids?\s+lock|profile\s+lock|passcode|"
    r"(?<!\bis\s)(?<!\bbe\s)safes?(?!\s+(?:bet|side|zone|hands|haven|mode|place|distance|choice|option|to|and|for|"
    r"enough|spaces?|investments?))|tijori|tijoree|lockers?|vault|briefcase|suitcase|trolley|luggage|diary|"
    r"almirah|almari|cupboard|dikki|wheels|dials|"
    # round secrets50: a lock, a door, an alarm and a safe in the languages of the digits' table
    r"alarm\w*|allarm\w*|puerta|portail|port[ãa]o|cancello|t[üu]r\w*|drzwi|bram\w*|kap[\u0131i]\w*|mlango|vchod\w*|"
    r"domofon\w*|digicode|cassaforte|caja\s+fuerte|coffre|tresor|sejf\w*|combinazione|combinaci[óo]n|combinaison|"
    r"kombination|kombinacja|kombinasyon|candado|lucchetto|cadenas|vorh[äa]ngeschloss|k[łl][óo]dka)\b",
    re.IGNORECASE)

# Principle 2: a code received to prove it is you (a one-time code) is a secret: it came by SMS, by a message or
# from a bank or an app ("the SMS said 771204", "HDFC ne bheja 093 551", "Paytm ka message aaya ..."), or it is
# valid for some minutes. The verbs of receiving: English "said", "sent", "came", "got", "received"; Hindi "bheja",
# "aaya", "mila"; Bengali "pathiyeche", "eseche"; Tamil "anuppina", "vandhuchu"; Telugu "pampincharu", "vachindi";
# Kannada "kalisidru", "bantu"; Marathi "pathavla", "aala"; Gujarati "mokalyo", "aavyo".
_RECEIVED = re.compile(
    r"\b(?:said|says|sent|send|came|come|comes|got|get|received|arrived|bhej\w*|aay\w*|aaya|aayi|aaye|mila|mili|"
    # what comes each time: "code aata hai, aaj ka 402918" (Hindi "aata", "milta"; Tamil "varum"; Telugu "vastundi")
    r"aat[aie]|milt[aie]|varum|vast\w*|barut\w*|yet[oe]|"
    r"pathi\w*|pathav\w*|eseche|esechhe|anupp?in\w*|vand\w*|vanth\w*|pampin\w*|vach\w*|kalis\w*|bant\w*|aala|"
    r"aali|mokal\w*|aav\w*)\b", re.IGNORECASE)
_SENDER = re.compile(r"\b(?:sms|text|message|msg|whatsapp|notification|otp|code|bank|app|site|portal)\b|"
                     r"\b[A-Z]{3,}\b|\b(?:paytm|gpay|phonepe|amazon|flipkart|swiggy|zomato|uber|ola)\b",
                     re.IGNORECASE)
_VALID_FOR = re.compile(r"\bvalid\s+(?:for\s+|till\s+)?(?:the\s+next\s+)?\d{1,2}\s*(?:min|mins|minutes|minute)\b",
                        re.IGNORECASE)

# Principle 2 too: a value that says "don't tell anyone" marks what is beside it a secret, in any language ("kisi ko
# mat batana", "share mat karna", "yaarukkum sollatheenga", "kauke bolo na", "evarikee cheppaku", "yarigu
# helbedi", "konalahi sangu naka", "koine kehta nahi"). Beside a code only: "don't tell anyone, the party is on
# Saturday" keeps a surprise, not a secret this filter guards.
_HUSH = re.compile(
    r"\b(?:don'?t|do\s+not|never)\s+(?:tell|share|give|show)\s+(?:it\s+|this\s+)?(?:to\s+)?(?:anyone|anybody|"
    r"others|people)\b|\bkeep\s+(?:it|this)\s+(?:a\s+)?secret\b|\b(?:kisi|kisiko|kisi\s+ko)\s+(?:bhi\s+)?"
    r"(?:mat|na|nahi)\s+(?:batana|bataana|batao|bolna|dena|dikhana)\b|\bshare\s+(?:mat|na|nahi)\s+karna\b|"
    r"\byaar(?:u|a)kk?um\s+soll\w*\b|\bkauke\s+bol(?:o|ben)\s+na\b|\bevari(?:kee|ki)\s+chepp\w*\b|"
    r"\byarig(?:u|oo)\s+hel\w*\b|\bkon(?:alahi|ala)\s+sang\w*\s+naka\b|\bkoine\s+(?:na\s+)?keh\w*\b|"
    r"\bsecret\s+(?:hai|rakhna|rakho)\b|"
    # round secrets51: Yoruba ("ẹ má sọ fún ẹnikẹ́ni", read without its tone marks), Swahili, Bahasa
    r"\bma\s+so\s+fun\s+(?:enikeni|eniyan)\b|\busim(?:wambie|mwambie)\s+mtu\b|\bjangan\s+(?:kasih\s+tahu|bilang)\b",
    re.IGNORECASE)

# Principle 4: an authenticator's (TOTP) seed is a secret by its form: sixteen or more characters of base32 (A-Z and
# 2-7 only), with a digit and a letter in it, or any such run of capitals beside a "seed", "secret", "setup key" or
# an authenticator.
_BASE32 = re.compile(r"(?<![\w-])(?=[A-Z2-7]*[2-7])(?=[A-Z2-7]*[A-Z])[A-Z2-7]{16,64}(?![\w-])")
_BASE32_LETTERS = re.compile(r"(?<![\w-])[A-Z2-7]{16,64}(?![\w-])")
_SEED_NEAR = re.compile(r"\b(?:seed|secret|setup\s+key|authenticator|2fa|totp|mfa)\b", re.IGNORECASE)

# Principle 3: a card number by its form, even one whose check digit a writer got wrong: Amex's 4-6-5 groups after
# 34 or 37, Diners' 4-6-4 after 30, 36, 38 or 39, or four groups of four after 4, 5 or 6 (Visa, Mastercard, RuPay)
# with a card's word beside it. (A Luhn-valid run of 13 to 19 digits is a card anyway.)
_CARD_FORM = re.compile(r"(?<![\d-])(?:3[47]\d\d[ -]\d{6}[ -]\d{5}|3[0689]\d\d[ -]\d{6}[ -]\d{4})(?![\d-])")
_CARD_GROUPS = re.compile(r"(?<![\d-])[456]\d{3}([ -])\d{4}\1\d{4}\1\d{4}(?![\d-])")
_CARD_WORD = re.compile(r"\b(?:card|visa|master\s*card|rupay|debit|credit|amex|exp|expiry|cvv)\b", re.IGNORECASE)

# Principle 5: the answer to a security question in any language: a question's word ("question", Hindi / Gujarati
# "sawaal", Bengali "prosno", Marathi / Hindi "prashna", Tamil "kelvi") with an answer's word ("answer", "jawab",
# "uttor", "uttar", "badhil", Telugu "javabu"), or a "(bank security)" note, or what to say "if the bank asks"
# ("agar bank puchhe ... toh bolna X").
_QUESTION = r"(?:questions?|q|sawaa?l|savaa?l|prashn\w*|prosno\w*|kelvi|prashne)"
_ANSWER = r"(?:answers?|jawaa?b|javaa?b|uttor|uttar|badh?il|bathil|javabu|uttara)"
_ASKED_ANSWER = re.compile(
    r"\b" + _QUESTION + r"\b(?:\W+\w+){0,3}?\W+" + _ANSWER + r"\b\s*(?:is|was|hai|:|-|=|\u2014)?\s*\S|"
    r"\(\s*(?:\w+\s+){0,2}(?:security|verification)(?:\s+" + _QUESTION + r")?\s*\)\s*[:=-]?\s*\S|"
    r"\b(?:verification|security)\b.{0,60}?\b" + _ANSWER + r"\s*(?:is|was|hai|:|-|=)\s*\S|"
    r"\b(?:agar|jab|if|when)\s+(?:\w+\s+){0,1}(?:(?i:bank|app|support|customer\s+care)|[A-Z]{3,})\s+(?:\w+\s+){0,3}"
    r"(?:puchh?e|poochh?e|puche|pooche|asks?)\b.{0,60}?\b(?:bolna|bolo|batana|bata\s+dena|kehna|say|tell\s+them)\b"
    r"\s+\S", re.IGNORECASE)

# Principle 7: an EVENT about a secret's kind is no secret when no code is given with it: it expired, was forgotten
# ("bhool gaya", Tamil "marandhuten", Marathi "visarlo", Bengali "bhule gechi"), reset, blocked, lost, did not
# arrive ("nahi aa raha", "aaschhe na", "varala"), was complained about.
_EVENT = re.compile(
    r"\b(?:expire[sd]?|expiring|expiry|forgot|forget|forgotten|bhool|bhul\w*|marand\w*|maranth\w*|visar\w*|"
    r"reset\w*|block(?:ed)?|lost|stolen|kho\s+gaya|leak\w*|hack\w*|complain\w*|complaint|delay\w*|late|"
    r"nahi\s+aa\w*|nahin\s+aa\w*|aas?chh?e\s+na|varala\w*|varal(?:ai|a)|didn'?t\s+(?:come|arrive|get)|"
    r"not\s+(?:coming|arriving|receiving|received)|stopped|expired|"
    # round secrets48: a plan to set or change one is no secret yet ("Remind me to set a passcode on the new iPad")
    r"remind\w*|plan(?:s|ned|ning)?\s+to|need\s+to|needs\s+to|have\s+to|going\s+to|will\s+(?:set|change)|"
    r"to\s+set\s+(?:up\s+)?(?:a|an|the)|set\s+up)\b", re.IGNORECASE)
#: A value that hands over something after its event ("reset to X", "changed to X", "naya X hai", ":"): not an event
#: alone.
_HANDS_OVER = re.compile(r"[:=]|\b(?:to|now|naya|nayi|new\s+one\s+is|ab)\s+\S*\d|\b(?:is|hai)\s+\S+\s*$",
                         re.IGNORECASE)


# Principle 1 for a phone: a pattern drawn to open it, said in Hindi or another language ("L banao", "Z shape draw
# karo", Tamil "varaiyunga", Telugu "geeyandi", Marathi "kadha"): a letter or a shape drawn, and the phone or a verb of
# opening beside it, or digits on the grid after it.
_DRAWN_HERE = re.compile(r"\b[A-Z](?:[- ]?shape)?\s+(?:banao|banana|banate|bana\s+ke|draw\s+kar\w*|varai\w*|"
                         r"geey\w*|geeya\w*|kadh\w*|aanko|aanka\w*)\b")
_DEVICE = re.compile(r"\b(?:phone|mobile|tablet|ipad|screen|laptop)\b", re.IGNORECASE)


#: Principle 1 in any word order: a secret's kind named, then a code within a few words ("pin reset karwaya, naya 4471
#: hai", Marathi "PIN badalla, ata 5521 aahe"): the code is the kind's, whatever verb or copula joins them.
_KIND_THEN_CODE = re.compile(r"\b(?:[mtu]?pin(?![ -]?codes?\b)|passcode|password|otp|cvv)\b(.{1,40})", re.IGNORECASE)


_LOCKER_NUMBER = re.compile(r"\blockers?\s*(?:no\.?|number|num|#)?\s*[:#-]?\s*\d{1,4}\b", re.IGNORECASE)


def use_reason(text: str) -> str | None:
    """Why ``text`` tells a secret by its form and its use (principles 1 to 6 above), or None."""
    found = codes(text)
    used = bool(_USE.search(text))
    kind = _KIND_THEN_CODE.search(text)
    if kind and codes(kind.group(1)):
        return "a code or PIN"  # "pin reset karwaya, naya 4471 hai": the kind named, then its code
    if _DRAWN_HERE.search(text) and (used or _DEVICE.search(text) or found):
        return "an unlock pattern"  # "Phone kholne ke liye L banao", "Z shape draw karo: 1-2-3-5-7-8-9"
    # round secrets48: a locker's NUMBER says which locker ("Locker 112 at Cult Koramangala is hers"), unless a verb
    # of opening gives it ("Locker 4471 se khulta hai"); its combination is read by the lock's words
    placed = codes(_LOCKER_NUMBER.sub(" · ", text))
    if found and (used or (_LOCKED.search(text) and placed)):
        return "a code given to open something"  # "diary ka lock 0-6-1-5 pe khulta hai", "type to open ... 190388"
    if used and (_MIXED_WORD.search(text) or _JOINED_BY_SYMBOL.search(text)) and \
            re.search(r"\b(?:liye|ke\s+liye|for|to|karo|karne|mein|la|ku|ki)\b", text, re.IGNORECASE):
        return "a password given to get in"  # "join karne ke liye rahul1234 daalo"
    if _JOINED_BY_SYMBOL.search(text):
        return "a password"  # "Office laptop mein login karne ke liye Tuesday!Rain"
    told = codes(text, numbered=True)
    if told and (_VALID_FOR.search(text) or (_RECEIVED.search(text) and _SENDER.search(text) and
                                             any(len(c) >= 4 for c in told))):
        return "a one-time code received"  # "The SMS said 771204, valid for 10 minutes"
    if _HUSH.search(text) and (told or _MIXED_WORD.search(text)):
        return "a code kept from others"  # "kisi ko mat batana" beside a code
    if _BASE32.search(text) or (_SEED_NEAR.search(text) and _BASE32_LETTERS.search(text)):
        return "an authenticator's seed"  # "authenticator seed KRUGKIDROVUWG2ZA"
    if _CARD_FORM.search(text) or (_CARD_GROUPS.search(text) and _CARD_WORD.search(text)) or \
            _CARD_GROUPS.fullmatch(text.strip(" .")):  # round secrets50: four groups of four, nothing else said
        return "a card number"  # "3759 876543 21001"
    if _ASKED_ANSWER.search(text):
        return "the answer to a security question"  # "Bank ke 'first pet' sawaal ka jawab: Tommy"
    return None


#: A date said with its month's name ("14 March 2029", "August 2026", "on 12 June"): no code (round secrets48).
_MONTHS = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|"
           r"august|september|october|november|december)")
_DATE_SAID = re.compile(r"\b(?:\d{1,2}(?:st|nd|rd|th)?\s+)?" + _MONTHS + r"\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?"
                        r"(?:\s+(?:19|20)\d\d)?\b", re.IGNORECASE)


def event_only(value: str) -> bool:
    """Whether ``value`` tells only an event about a secret's kind (principle 7): an event's word, no code, no
    password-shaped word, nothing handed over after it (a date said with its month is no code)."""
    value = _DATE_SAID.sub(" ", value)
    return bool(_EVENT.search(value)) and not codes(value) and not re.search(r"\d{3}|\d[ -]\d|\d/\d", value) and \
        not _MIXED_WORD.search(value) and \
        not _JOINED_BY_SYMBOL.search(value) and not _HANDS_OVER.search(value) and \
        not re.search(r"[!@#$%^&*]\w", value)


# Principle 3: a number masked but for its last four tells no number ("XXXX XXXX 9021", "A/c XXXXXX8812",
# "ending ...7781"), whatever key it sits under. One reading of that shape, used here and by the key rules'
# :data:`board.language.secrets._LAST_FOUR` (duplicates D7).
MASKED = (r"(?:(?:\bends?|\bending|\blast\s+(?:4|four)(?:\s+digits)?)(?:\s+(?:in|with|are|is|of|:))?\s*[x*•.…\s-]*\d{4}"
          r"|[x*•.…]{2,}(?:[\s-]*[x*•.…]{2,})*[\s-]*\d{4}|[x*•]{4,}\d{2,4})")
_MASKED = re.compile(r"(?<![\w*•.…])" + MASKED + r"(?!\d)", re.IGNORECASE)


def masked_out(value: str) -> str:
    """``value`` with its masked numbers written as "(masked)"."""
    return _MASKED.sub("(masked)", value)


# Principle 3: a policy's, an order's, a ticket's or a booking's number given as a record is no secret (it opens
# nothing); a card's, an account's or an ID's number stays one (their own rules read them).
_RECORD = re.compile(r"\b(?:" + RECORD_WORDS + r"|ca|k\s*no)\.?"
                     r"\s*(?:no|number|num|id|#)?\.?\s*[:#-]?\s*([A-Z]{0,4}\d[\d -]{5,}\d)", re.IGNORECASE)


def records_out(value: str) -> str:
    """``value`` with the numbers of records ("policy no. 2311 4455 6677") written as "(record)"."""
    return _RECORD.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + "(record)", value)


# Principle 7 too: a secret's KIND talked about in any language, with no code given, is no secret ("OTP ab WhatsApp pe
# bhi aata hai", "HDFC ke security sawaal bahut confusing hain"). What follows the kind's word says whether it is given:
# a word of talk (a particle, a verb, a channel) is talk; any other word may be the secret ("password sunflower hai").
_KIND = re.compile(r"\b(?:password|passcode|pin|mpin|otp|cvv|code|pattern|sawaa?l|questions?)\s+(\S+)", re.IGNORECASE)
_TALK = {"ab", "bhi", "nahi", "nahin", "aata", "aati", "aate", "aaya", "aa", "ka", "ki", "ke", "ko", "se", "pe", "par",
         "mein", "wala", "wali", "bahut", "hamesha", "kabhi", "sms", "message", "app", "la", "ku", "kku", "cha", "chi",
         "che", "na", "ni", "nu", "er", "ta", "te", "and", "or", "for", "on", "via", "through", "arrives", "came",
         "comes", "didn't", "not", "never", "always", "bhejta", "bhejti", "varum", "vandhu", "ostundi",
         "baruthe", "yete", "aave", "asbe", "ashe", "login", "kabhi-kabhi", "jaldi", "late", "der",
         # an event's verb after the kind: "password change karne ka reminder", "pin reset karwaya"
         "change", "reset", "update", "badalna", "badla", "badli", "karne", "karwaya", "bhool", "wale"}


#: "is" / "was" before anything but a word of how it is gives the thing its value: "the pattern on my phone is top row
#: left to right".
_GIVEN = re.compile(r"\b(?:is|was|are)\s+(?!(?:not|too|very|so|always|never|also|still|really|annoying|confusing|"
                    r"silly|slow|late|a\s+pain)\b)|"
                    # Hindi gives a value by keeping or making it: "password change karke sunflower rakha"
                    r"\b(?:rakh\w*|set\s+ki\w*|banay\w*|bana\s+diy\w*)\b", re.IGNORECASE)


def talk_only(value: str) -> bool:
    """Whether ``value`` only talks about a secret's kind: five words or more, no code, no mark, and after each kind's
    word a word of talk (see :data:`_TALK`)."""
    if len(value.split()) < 5 or codes(value) or re.search(r"\d{3}|\d[ -]\d", value) or _MIXED_WORD.search(value) or \
            _JOINED_BY_SYMBOL.search(value) or re.search(r"[:=]|[!@#$%^&*]\w", value) or _GIVEN.search(value):
        return False
    kinds = list(_KIND.finditer(value))
    return bool(kinds) and all(found.group(1).lower().strip(".,;!?") in _TALK for found in kinds)


# Principle 1 to 7 in the languages' own scripts: a writer may put "पासवर्ड" for "password", "४४७१" for "4471",
# "खोलता" for "kholta". The digits of every Indian script are read as digits, and the words that say a secret's kind,
# a lock, opening, sending, keeping quiet, a question and its answer are read as the Latin words the rules know
# (loanwords such as "password", "pin", "OTP" are how they are written in these scripts). A stem is read at a word's
# start, whatever ending follows ("खोलने", "खुलता").
_INDIC = "\u0900-\u0dff"
_NATIVE: tuple[tuple[str, str], ...] = (
    # Devanagari (Hindi, Marathi)
    ("पिनकोड", "pincode"), ("पिन कोड", "pin code"), ("पासवर्ड", "password"), ("पासकोड", "passcode"), ("पिन", "pin"),
    ("कोड", "code"), ("ओटीपी", "OTP"), ("एटीएम", "ATM"), ("लॉकर", "locker"), ("लॉक", "lock"), ("ताला", "taala"),
    ("तिजोरी", "tijori"), ("अलमारी", "almari"), ("खोल", "khol"), ("खुल", "khul"), ("दबा", "daba"), ("डाल", "daal"),
    ("उघड", "ughad"), ("कुलूप", "kulup"), ("भेज", "bhej"), ("आया", "aaya"), ("किसी को मत बताना", "kisi ko mat batana"),
    ("कोणाला सांगू नका", "konala sangu naka"), ("सवाल", "sawaal"), ("प्रश्न", "prashn"), ("जवाब", "jawab"),
    ("उत्तर", "uttar"), ("सिक्योरिटी", "security"), ("सिक्यूरिटी", "security"), ("वायफाय", "wifi"), ("वाईफाई", "wifi"),
    ("भूल", "bhool"), ("शिकायत", "complaint"), ("रीसेट", "reset"), ("बैंक", "bank"), ("पैटर्न", "pattern"),
    # Bengali
    ("পাসওয়ার্ড", "password"), ("পিন", "pin"), ("এটিএম", "ATM"), ("ওটিপি", "OTP"), ("তালা", "taala"),
    ("খোল", "khol"), ("প্রশ্ন", "prosno"), ("উত্তর", "uttor"),
    # Tamil ("பின்" is also "after": left out)
    ("கடவுச்சொல்", "password"), ("பாஸ்வேர்டு", "password"), ("லாக்கர்", "locker"), ("பூட்டு", "poottu"),
    ("திற", "thira"), ("ஓடிபி", "OTP"), ("ஏடிஎம்", "ATM"), ("அனுப்பின", "anuppina"), ("கேள்வி", "kelvi"),
    ("பதில்", "badhil"), ("யாருக்கும் சொல்லாதீங்க", "yaarukkum sollatheenga"),
    # Gujarati
    ("પાસવર્ડ", "password"), ("પિન", "pin"), ("તિજોરી", "tijori"), ("ખોલ", "khol"), ("દબાવ", "dabav"),
    ("તાળું", "taala"), ("ઓટીપી", "OTP"),
    # Telugu
    ("పాస్‌వర్డ్", "password"), ("పాస్వర్డ్", "password"), ("పిన్", "pin"), ("సెక్యూరిటీ", "security"),
    ("ప్రశ్న", "prashna"), ("జవాబు", "javabu"), ("తాళం", "taala"), ("తెరు", "teru"), ("ఓటీపీ", "OTP"),
    # Kannada
    ("ಪಾಸ್‌ವರ್ಡ್", "password"), ("ಪಾಸ್ವರ್ಡ್", "password"), ("ಪಿನ್", "pin"), ("ಬೀಗ", "beega"), ("ಕೋಡ್", "code"),
    ("ತೆರೆ", "tere"), ("ಒಟಿಪಿ", "OTP"),
    # Malayalam, Gurmukhi
    ("പാസ്‌വേഡ്", "password"), ("പാസ്വേഡ്", "password"), ("പിൻ", "pin"), ("ਪਾਸਵਰਡ", "password"), ("ਪਿੰਨ", "pin"),
    ("ਤਾਲਾ", "taala"),
)
_NATIVE_WORD = re.compile(f"(?<![{_INDIC}])(?:" + "|".join(re.escape(n) for n, _ in _NATIVE) + ")")
_NATIVE_LATIN = dict(_NATIVE)


_HOST_PORT = re.compile(r"(?<![\w.])((?:\d{1,3}(?:\.\d{1,3}){3})|[a-z][\w-]*(?:\.[\w-]+)+):\d{2,5}(?![\w.])",
                        re.IGNORECASE)


def ports_out(value: str) -> str:
    """``value`` with a host's port dropped ("192.168.1.30:8000" reads "192.168.1.30"): a port opens nothing, it is no
    code (round secrets51; principle 18 already kept "on port 5432")."""
    return _HOST_PORT.sub(r"\1", value) if ":" in value else value


def marks_out(value: str) -> str:
    """``value`` without tone and accent marks on Latin letters when it has a letter with a dot below or a combining
    mark (Yoruba, Vietnamese: "nọ́mbà àṣírí" reads "nomba asiri"), so one table of words reads them (round secrets51)."""
    if not re.search("[\u0300-\u036f\u1ea0-\u1ef9\u1e00-\u1e9f]", value):
        return value
    return "".join(ch for ch in unicodedata.normalize("NFD", value) if not unicodedata.combining(ch))


def native_to_latin(value: str) -> str:
    """``value`` with the digits of Indian scripts as ASCII digits and the words of :data:`_NATIVE` in Latin script,
    spaced from what follows in the native script ("खोलता" reads "khol ता")."""
    if not re.search(f"[{_INDIC}]", value):
        return value
    value = "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in value)
    return _NATIVE_WORD.sub(lambda m: _NATIVE_LATIN[m.group(0)] + " ", value).replace("  ", " ")


# --- Round secrets48 (blind6's misses and refusals, read as principles) -----------------------------------------------

# Principle 8: a national identity number is a secret by its FORM, of many countries, whatever names it: Singapore's
# NRIC / FIN (S, T, F, G or M, seven digits, a letter), the UK's National Insurance number (two letters, three pairs of
# digits, A-D), the US SSN written with spaces, Canada's SIN (three groups of three beside "SIN" or "social
# insurance"), the UAE's Emirates ID (784, the year of birth, seven digits, one), Brazil's CPF (ddd.ddd.ddd-dd) and
# RG, Spain's DNI (eight digits and a letter) and NIE (X, Y or Z, seven digits, a letter). Aadhaar, PAN, passport and
# voter ID forms are read by :data:`board.language.secrets._IDS`. A masked or partial one ("XXXX XXXX 1126", "SSN last
# four 9032") tells no number: masked numbers are read out first (:func:`masked_out`) and a partial one has no form.
_NATIONAL_ID = re.compile(
    r"(?<![\w-])(?:[STFGM]\d{7}[A-Z]|"                                          # NRIC / FIN
    r"[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]|"  # UK NI number (any prefix: a writer's "QQ" is still the form)
    r"784-?\d{4}-?\d{7}-?\d|"                                                    # Emirates ID
    r"\d{3}\.\d{3}\.\d{3}-\d{2}|"                                                # Brazil's CPF
    r"\d{2}\.\d{3}\.\d{3}-[\dX]|"                                                # Brazil's RG
    r"\d{8}-?[A-HJ-NP-TV-Z]|"                                                    # Spain's DNI
    r"[XYZ]-?\d{7}-?[A-HJ-NP-TV-Z])(?![\w-])")                                   # Spain's NIE
#: The words that name a national number: a SIN, an SSN written with spaces, are nine digits only beside them.
_NATIONAL_WORD = re.compile(r"\b(?:sin|social\s+(?:insurance|security)|ssn|national\s+(?:insurance|id(?:entity)?)|"
                            r"ni\s+(?:number|no)|nric|tax\s+file|tfn|bsn|personnummer|codice\s+fiscale)\b",
                            re.IGNORECASE)
_NINE_DIGITS = re.compile(r"(?<![\w-])\d{3}[ -]?\d{2,3}[ -]?\d{3,4}(?![\w-])")

# Principle 9: a card's verification code in any name is a secret: CVV, CVC, CID (Amex's, on the front), CSC, a
# "security code", "the (three|four) digits on the back / front", "last three digits on the back", in the languages
# read here (Hindi "peeche", Kannada "hinde", Tamil "pinnaadi" / "pinnal", Telugu "venaka", Bengali "pichone", Marathi
# "maage"): a card named beside the back or the front and a code of three or four digits.
_CARD_CODE_NAME = re.compile(r"\b(?:cvv2?|cvc2?|cid|csc|cvn|security\s+code|card\s+code)\b", re.IGNORECASE)
_CARD_NAME = re.compile(r"\b(?:card|cards|amex|visa|master\s*card|rupay|debit|credit|diners|discover)\b",
                        re.IGNORECASE)
_CARD_SIDE = re.compile(r"\b(?:back|behind|front|reverse|peeche|pichhe|piche|pichhe|hinde|hindhe|pinnaadi|pinnadi|"
                        r"pinnal|pinnala|venaka|venuka|pichone|pichhone|pechone|maage|paachhal|pachal|peeche)\b",
                        re.IGNORECASE)
_THREE_OR_FOUR = re.compile(r"(?<![\w.,/-])\d{3,4}(?![\w/-]|[.,]\d)")
#: Round secrets50: a card's few digits counted, wherever on the card they are ("the 4 tiny digits above the embossed
#: ones on the Amex: 8820"); its last or first four are masked numbers (read out before, :func:`masked_out`).
_CARD_DIGITS_COUNTED = re.compile(r"\b(?<!last\s)(?<!first\s)(?:3|4|three|four)\s+(?:\w+\s+){0,2}digits?\b",
                                  re.IGNORECASE)


def card_code(text: str) -> bool:
    """Whether ``text`` gives a card's verification code (principle 9)."""
    if not _THREE_OR_FOUR.search(text):
        return False
    return bool(_CARD_CODE_NAME.search(text) and (_CARD_NAME.search(text) or len(text.split()) <= 4)) or \
        bool(_CARD_NAME.search(text) and (_CARD_SIDE.search(text) or _CARD_DIGITS_COUNTED.search(text)))


# Principle 10: a recovery phrase by its FORM: twelve, eighteen or twenty-four words of a wallet's word list (BIP-39's
# English list, public, shipped beside this module as bip39_english.txt: the list of the MIT-licensed python-mnemonic
# package, the BIP-39 specification's), numbered ("1. velvet 2. anchor") or in a row. A list of ordinary words numbered
# the same way (a packing list) holds few of them; the run must be all but one of the list's.
_BIP39 = frozenset((Path(__file__).with_name("bip39_english.txt")).read_text(encoding="utf-8").split())
_NUMBERED_WORD = re.compile(r"(?<![\w.])\d{1,2}\s*[.):-]?\s*([A-Za-z]{3,8})\b")


def numbered_seed(text: str) -> bool:
    """Whether ``text`` holds a numbered run of twelve or more words, all but one of them BIP-39 words."""
    words = [w.lower() for w in _NUMBERED_WORD.findall(text)]
    return len(words) >= 12 and sum(w in _BIP39 for w in words) >= len(words) - 1


def bip39_share(words: list[str]) -> float:
    """The share of ``words`` that are BIP-39 words."""
    return sum(w.lower() in _BIP39 for w in words) / max(1, len(words))


# Principle 11: a combination's turns in more languages are a lock's code: Bengali "baam dike 20, dan dike 5",
# Kannada "edakke 12, balakke 30", Gujarati "daavi baju 15, jamni baju 40", Tamil "idathu pakkam 22", Marathi "dava 10,
# ujva 25", Telugu "edama 12, kudi 30", Malayalam "idathu 12, valathu 30", Punjabi "khabbe 12, sajje 30". Two turns
# or more, as in English ("left 12 right 7", read by :data:`board.language.secrets._DIAL_TURN`).
_TURN = re.compile(
    r"\b(?:baa?m|daa?n|daa?h?in|daa?yi?n|baa?yi?n)\s+(?:dike|dik|taraf|or)\s+\d{1,2}\b|"
    r"\b(?:edakke|balakke|yedakke|eda|bala)\s+(?:kade\s+)?\d{1,2}\b|"
    r"\b(?:daa?vi|jamni|jamani|jamnee|daabi)\s+(?:baju|bajue|taraf)?\s*\d{1,2}\b|"
    r"\b(?:idathu|valathu|idath|valath|idadhu|valadhu)\s+(?:pakkam|pakkamaa?|vasam)?\s*\d{1,2}\b|"
    r"\b(?:dava|daavya|ujva|ujavya|edama|kudi|khabbe|sajje)\s+(?:baju|vaipu|paase)?\s*\d{1,2}\b",
    re.IGNORECASE)

# Principle 12: a keypad of a car, a door, a gate or an intercom is a lock: "keyless entry number on the Ford door pad:
# 5 3 1 1 7", "SecuriCode", "intercom entry code".
_KEYPAD = re.compile(r"\b(?:keyless(?:\s+entry)?|door\s*pad|key\s*pad|securicode|intercom|entry\s+code|"
                     r"access\s+pad|number\s+pad)\b", re.IGNORECASE)

# Principle 5 once more: a question a bank asks, and its answer after a mark or "I gave": "ICICI question, favourite
# teacher: Mrs. Dsouza", "HDFC asked for my birth city, I gave Nagpur".
_BANK_QUESTION = re.compile(
    r"\b(?:(?i:bank|app|security|verification)|[A-Z]{3,})\s+(?i:question|q|sawaal|prashna)\b.{0,50}?:\s*\S|"
    r"\b(?:(?i:bank|app)|[A-Z]{3,})\s+(?i:asked|asks|asked\s+me)\s+(?i:for|about)\b.{0,60}?"
    r"\b(?i:i\s+(?:gave|said|told\s+them|answered|put)|answered|answer\s+was)\s+\S|"
    # any bank's name ("Kotak question, first bike: ..."): the question's topic, then the answer after a mark
    r"(?<!\w)(?!(?i:interview|exam|quiz|test|survey|trivia|homework|puzzle|riddle|class|viva|gk|faq|poll)\b)"
    r"(?:[A-Z][A-Za-z]{2,}|(?i:bank|app))\s+(?i:question\b[^:]{0,12}?(?:my\s+|your\s+)?(?:favou?rite|first|birth|mother|father|pet|school|teacher|"
    r"childhood|nick\s*name|best\s+friend|street|maiden|dream)\b[^:]{0,30}:\s*\S)")


#: An account's number said as one, under any key: "routing 021000021, acct 483920017" (the routing number is public,
#: the account's is not).
_ACCOUNT_SAID = re.compile(r"\b(?:acct|account|a/c)\s*(?:no\.?|number|num|#)?\s*[:#-]?\s*\d{8,18}\b", re.IGNORECASE)


#: Principle 8 spelled out: an ID's characters one by one, dashed or spaced ("PAN: B-Q-R-P-S 7730 L") are the ID; they
#: are read joined. Aadhaar's, PAN's, a passport's and the national forms above are then read on the joined run.
_SPELLED = re.compile(r"(?<![\w-])(?:[A-Z0-9]{1,4}[ -]){2,}[A-Z0-9]{1,4}(?![\w-])")
_SPELLED_ID = re.compile(r"^(?:[A-Z]{5}\d{4}[A-Z]|[A-Z]\d{7}|[A-Z]{3}\d{7})$")


def _spelled_id(text: str) -> bool:
    """Whether ``text`` spells an ID one character or group at a time (see :data:`_SPELLED`)."""
    for found in _SPELLED.finditer(text):
        joined = re.sub(r"[ -]", "", found.group(0))
        if re.search(r"[A-Z]", joined) and re.search(r"\d", joined) and \
                (_SPELLED_ID.match(joined) or _NATIONAL_ID.fullmatch(joined)):
            return True
    return False


def form_reason(text: str) -> str | None:
    """Why ``text`` tells a secret by the forms of round secrets48 (principles 8 to 12), or None."""
    if _NATIONAL_ID.search(text) or _spelled_id(text) or (_NATIONAL_WORD.search(text) and _NINE_DIGITS.search(text)):
        return "a national identity number"  # "S8421973D", "QQ 12 34 56 C", "CPF 123.456.789-09"
    if card_code(text):
        return "a card's verification code"  # "The 4 digit CID on the front of the Amex is 7261"
    if numbered_seed(text):
        return "a seed or recovery phrase"  # "1. velvet 2. anchor ... 12. cactus"
    if len(_TURN.findall(text)) >= 2:
        return "a lock's combination"  # "baam dike 20, dan dike 5, abar baam dike 33"
    if _KEYPAD.search(text) and codes(text, numbered=True):
        return "a keypad's code"  # "Keyless entry number on the Ford door pad: 53117"
    if _ACCOUNT_SAID.search(text):
        return "a bank account number"  # "acct 483920017"
    if _BANK_QUESTION.search(text):
        return "the answer to a security question"  # "ICICI question, favourite teacher: Mrs. Dsouza"
    return None


# --- Round secrets49 (blind7's misses, read as principles that hold beyond their words) ----------------------------

# Principle 13: a PIN's or a password's word in many languages is one table, not a rule per language. A word of the
# first row names a secret by itself and a code or a password-shaped word beside it is one ("nambari ya siri 5590",
# "senha do Itaú: 4 4 8 2 1 9", "contraseña Chilaquiles_77"); a word of the second row only names a code, and is one
# beside a bank's, a card's, an app's or a door's name (principle 14's :data:`_SERVICE`): "NIP de la tarjeta Banorte:
# 3391" is a PIN, a "Kode promo: HEMAT50" is not; Dutch "pincode" is a PIN beside a bank's card, India's a postcode.
SECRET_WORDS_OF_LANGUAGES = (
    # Swahili, Bahasa Indonesia / Melayu, Tagalog
    r"nambari\s+ya\s+siri|namba\s+ya\s+siri|neno\s+(?:la\s+)?siri|kata\s+sandi|kata\s+laluan|kata\s+kunci|"
    r"kalimat\s+sandi|kode\s+akses|kode\s+rahasia|nomor\s+rahasia|kode\s+pin|"
    # Spanish, Portuguese, Catalan, Italian, French
    r"contrase[ñn]as?|contrasenya|clave\s+(?:secreta|de\s+acceso|personal)|senhas?|c[óo]digo\s+secreto|"
    r"parola\s+d'ordine|codice\s+segreto|mot\s+de\s+passe|code\s+(?:secret|confidentiel|d'acc[èe]s)|"
    # German, Dutch, Scandinavian, Finnish, Polish, Czech, Hungarian
    r"geheimzahl|geheimnummer|geheimcode|kennwort|passwort|zugangscode|wachtwoord|toegangscode|l[öo]senord|"
    r"l[öo]senordet|passordet|passord|adgangskode|salasana|tunnusluku|has[łl]o|heslo|jelsz[óo]|"
    # Turkish, Vietnamese, Arabic and Persian in Latin script, Greek
    r"[şs]ifre\w*|parola|m[ậa]t\s+kh[ẩa]u|m[ãa]\s+pin|ramz(?:\s+al)?[\s-]+sirr?i?|kalmat\s+(?:al\s+)?sirr?|"
    r"kilmat\s+(?:al\s+)?sirr?|kalimat\s+al[\s-]+sirr?|kalame\s+obur|kodikos|"
    # round secrets50: Russian / Ukrainian, Japanese, Korean, Kazakh, Zulu / Xhosa, Afrikaans, Hausa in Latin script,
    # and a French door's "digicode"
    r"parol'?|ansh[oō]u?\s+bang[oō]u?|pasuw[aā]do|bimil\s*beonho|amho|qupiya\s+s[öo]z|iphasiwedi|wagwoord|"
    r"lambar\s+sirri|kalmar\s+sirri|digicode|"
    # round secrets51: Yoruba ("nọ́mbà àṣírí", read without its tone marks) and Amharic in Latin script ("yemistir qal")
    r"nomba\s+asiri|oro\s+asiri|asiri|yemistir\s+qal|yeyilef\s+qal|mistir\s+qal")
CODE_WORDS_OF_LANGUAGES = (r"nip|kode|kod|koodi|c[óo]digo|codice|clave|numara|m[ãa]\s+s[ốo]|code\s+(?:porte|carte)|"
                           r"pin(?:code)?\s+van|nummer|n[úu]mero|namba|nambari|access|zugang|akses")
_SECRET_WORD_ANY = re.compile(r"(?<!\w)(?:" + SECRET_WORDS_OF_LANGUAGES + r")(?!\w)", re.IGNORECASE)
_CODE_WORD_ANY = re.compile(r"(?<!\w)(?:" + CODE_WORDS_OF_LANGUAGES + r")(?!\w)", re.IGNORECASE)
#: A password's shape beside a word of the table: letters and a digit or a symbol inside ("Chilaquiles_77").
_TOKEN_SHAPED = re.compile(r"(?<![\w@.])(?=[\w!@#$%^&*]*[A-Za-z])(?=[\w!@#$%^&*]*[\d_!@#$%^&*])[\w!@#$%^&*]{5,}")

# Principle 14: a short code is a secret by its USE, whatever the language: the one code in a fact that names a bank,
# a card, a wallet or an app, a phone's voicemail, a door or a login ("Kaspi bank app: 118402", "UPI ka 6 digit:
# 190475", "voicemail access 2211", "the Monzo app wants 7302 to open"), where no record's word names the number (an
# order, a ticket, a policy, an invoice, a room, a flight, an employee), no amount, rating or count is said and no
# company's registration (VAT, GST, a firm's tax number) is meant. Judged on tuning49's harmless numbers.
_SERVICE = re.compile(r"(?<!\w)(?:\w*bank\w*|\w*banc[oa]|banque|bancomat|atm|app|apps|aplikasi|appen|upi|m-\w+|"
                      r"netbanking|mobile\s+banking|wallet|card|cards|karte|kart\w*|carte|tarjeta|cart[ãa]o|kartu|"
                      r"karty|thẻ|bankpas|pinpas|voicemail|sesli\s+mesaj|buz[oó]n|mailbox|porte|puerta|port[ãa]o|"
                      r"t[üu]r|immeuble|login|log\s+in|sign\s+in|unlock|passcode)(?!\w)", re.IGNORECASE)
_NOT_A_SECRETS_NUMBER = re.compile(
    r"(?<!\w)(?:" + RECORD_WORDS + r"|room|flight|seat|gate\s+\d|employee|staff|roll|vat|gst\w*|tax|ust|npwp|nif|"
    r"rfc|abn|kvk|registration|reg|iban|swift|bic|ifsc|routing|sort\s+code|branch|users?|stars?|reviews?|rating|"
    r"downloads?|fees?|price|cost|rs|inr|usd|eur|mxn|idr|million|lakh|crore|thousand|percent|%|rating|hotline|"
    r"helpline|customer\s+care|call\s+cent(?:re|er)|toll[\s-]free|phone\s+number|tel|whatsapp|promo|coupon|"
    r"voucher|discount|referral|pincode\s+of|postal|zip|postleitzahl|c\.p|cep|lockers?|flat|gym|mbps|gbps|"
    r"requests?|restaurants?|air|rank|marks|score|hsn|hs|sku|area\s+code|country\s+code|door\s+number|"
    r"maintenance|rent|salary|emi)(?!\w)", re.IGNORECASE)


def _used_code(text: str) -> bool:
    """Principle 14: one short code in ``text``, beside a service's name, and no record's or public number's word."""
    found = codes(text)
    if len(found) != 1 or not _SERVICE.search(text) or _NOT_A_SECRETS_NUMBER.search(text):
        return False
    return not re.search(r"\d[.,:]\d|\d\s*(?:am|pm|h|hrs?|min|days?|km|kg|%)\b", text, re.IGNORECASE)


def languages_secret(text: str) -> bool:
    """Principles 13 and 14: a PIN's or a password's word of any language with a code, or a code by its use."""
    if _SECRET_WORD_ANY.search(text) and (codes(text, numbered=True) or _TOKEN_SHAPED.search(text)):
        return True
    if _CODE_WORD_ANY.search(text) and _SERVICE.search(text) and not _NOT_A_SECRETS_NUMBER.search(text) and \
            (codes(text, numbered=True) or _TOKEN_SHAPED.search(text)):
        return True
    return _used_code(text)


# Principle 15: an identity number by its checksum or its shape, not by its name: Aadhaar (twelve digits, Verhoeff's
# check), Turkey's TC kimlik (eleven digits, two check digits), Germany's Steuer-ID (eleven digits, ISO 7064 MOD 11,10,
# one digit twice or thrice in the first ten), Mexico's CURP (eighteen characters holding a birth date, H or M, a
# state), Indonesia's NIK (sixteen digits, a province, a birth date, women's day plus 40). A checksum makes a long
# number an ID with no word beside it (a phone number starts with 0 or +, an order number fails the check; a card's
# sixteen digits pass Luhn and are read as a card first). Under an ID's word of any language (:data:`_ID_WORDS`), eight
# to eighteen digits, or a document's letters and digits ("L01X00T47"), are the ID, unless a company's is meant.
_ID_WORDS = re.compile(
    r"(?<!\w)(?:steuer[\s-]?id\w*|steuer\w*nummer|identifikationsnummer|personalausweis\w*|ausweis\w*|reisepass\w*|"
    r"kimlik\w*|tc\s+no|cccd|cmnd|c[ăa]n\s+c[ưu][ớo]c|h[ộo]\s+chi[ếe]u|nik|ktp|nin|bvn|curp|kitambulisho\w*|pesel|"
    r"num[ée]ro\s+fiscal|nir|s[ée]curit[ée]\s+sociale|dni|c[ée]dula|rut|run|cpf|philsys|psn|umid|sss|"
    r"codice\s+fiscale|id\s+(?:number|no|card)|identity|identitas|identidad|identidade|identit[àa]|carte\s+d'identit[ée]|"
    r"passport|pasaporte|passeport|passaporto|paspor|pasaport|dow[óo]d|personnummer|henkil[öo]tunnus|amka|mykad|"
    r"ic\s+no|national\s+id|teudat\s+zehut|mispar\s+zehut|nhs\s+(?:number|no)|medicare|health\s+card|ahv|"
    r"sozialversicherungs\w*|aadhaar|aadhar|ssn|tin\s+no|nida|ghana\s+card|huduma|omang|emirates\s+id|iqama)(?!\w)",
    re.IGNORECASE)
_COMPANY = re.compile(r"(?<!\w)(?:vat|iva|partita|empresa|company|companies|perusahaan|firma|business|gmbh|ltd|llc|"
                      r"corp\w*|inc|"
                      r"sociedad|soci[ée]t[ée]|pt|cv|sa|srl|bv|invoice|factura|rechnung)(?!\w)", re.IGNORECASE)
_PHONE = re.compile(r"(?<!\w)(?:phone|tel|telp|telefon\w*|tel[ée]fono|mobile|mobil|cell|call|whatsapp|wa|line|"
                    r"hatt[\u0131i]|simu|hp|handphone|landline|fax|contact|number\s+is)(?!\w)", re.IGNORECASE)
_LONG_DIGITS = re.compile(r"(?<![\w+])\d(?:[ .-]?\d){7,17}(?![\w])")
_DOCUMENT = re.compile(r"(?<![\w@.])(?=[A-Z0-9]*[A-Z])(?=(?:[A-Z]*\d){4})[A-Z0-9]{8,18}(?![\w@])")
_CURP = re.compile(r"(?<![A-Z0-9])[A-Z][AEIOUX][A-Z]{2}\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])[HMX]"
                   r"(?:AS|BC|BS|CC|CL|CM|CS|CH|DF|DG|GT|GR|HG|JC|MC|MN|MS|NT|NL|OC|PL|QT|QR|SP|SL|SR|TC|TS|TL|VZ|YN|ZS|NE)"
                   r"[B-DF-HJ-NP-TV-Z]{3}[A-Z0-9]\d(?![A-Z0-9])")
_ISSUED = re.compile(r"\b(?:ausgestellt|g[üu]ltig\s+bis|issued|expires?|expiry|valid\s+(?:until|till|thru)|"
                     r"v[áa]lid[oa]\s+hasta|valable|scadenza|berlaku)\b", re.IGNORECASE)
_VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
               [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
               [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
               [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
               [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 8, 7, 6, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
               [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]


def verhoeff_ok(digits: str) -> bool:
    """Whether ``digits`` passes Verhoeff's check (Aadhaar's last digit)."""
    check = 0
    for i, digit in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[i % 8][int(digit)]]
    return check == 0


def steuer_id_ok(digits: str) -> bool:
    """Whether eleven ``digits`` are a German Steuer-ID: no leading 0, one digit twice or thrice in the first ten,
    and the ISO 7064 MOD 11,10 check digit."""
    counts = sorted(digits[:10].count(d) for d in set(digits[:10]))
    if len(digits) != 11 or digits[0] == "0" or counts[-1] not in (2, 3) or counts[:-1].count(1) != len(counts) - 1:
        return False
    product = 10
    for digit in digits[:10]:
        total = (int(digit) + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == int(digits[10])


def tc_kimlik_ok(digits: str) -> bool:
    """Whether eleven ``digits`` are a Turkish TC kimlik number (its tenth and eleventh digits check the others)."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    d = [int(c) for c in digits]
    return (sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10 == d[9] and sum(d[:10]) % 10 == d[10]


#: Indonesia's provinces, the first two digits of a NIK.
_NIK_PROVINCES = frozenset({"11", "12", "13", "14", "15", "16", "17", "18", "19", "21", "31", "32", "33", "34", "35",
                            "36", "51", "52", "53", "61", "62", "63", "64", "65", "71", "72", "73", "74", "75", "76",
                            "81", "82", "91", "92", "94", "95", "96"})


def nik_ok(digits: str) -> bool:
    """Whether sixteen ``digits`` are shaped as Indonesia's NIK: a province, a district, a birth date (a woman's day
    plus 40), a running number."""
    if len(digits) != 16 or digits[:2] not in _NIK_PROVINCES or digits[2:4] == "00" or digits[12:] == "0000":
        return False
    day, month = int(digits[6:8]), int(digits[8:10])
    return (1 <= day <= 31 or 41 <= day <= 71) and 1 <= month <= 12


def identity_number(text: str) -> bool:
    """Principle 15: an identity number by its checksum or shape, or under an ID's word of any language."""
    if _CURP.search(text.upper()):
        return True
    company = _COMPANY.search(text)
    phone = _PHONE.search(text)
    for found in _LONG_DIGITS.finditer(text):
        digits = re.sub(r"\D", "", found.group(0))
        if company or phone or re.search(r"\+\d{1,3}[ -]?$", text[:found.start()]):
            continue  # a firm's number, or a phone's: a checksum alone is 1 in 10 to 1 in 100 of any digits
        if (len(digits) == 12 and digits[0] not in "01" and verhoeff_ok(digits)) or tc_kimlik_ok(digits) or \
                steuer_id_ok(digits) or nik_ok(digits):
            return True
    if company:
        return False
    if _ID_WORDS.search(text) and (_LONG_DIGITS.search(text) or _DOCUMENT.search(text)):
        return True
    return bool(_ISSUED.search(text) and _DOCUMENT.search(text))


# Principle 16: the digits on a card's back by any card's name ("the three digits on the back of my HDFC Regalia are
# 482"): digits said to be on the back or the front of something, and three or four of them given.
_ON_THE_BACK = re.compile(r"\b(?:digits?|numbers?)\s+(?:on|at|behind)\s+(?:the\s+)?(?:back|reverse|front)\b|"
                          r"\b(?:digits?|numbers?)\s+behind\b", re.IGNORECASE)

# Principle 17: an answer given to a security question, by its topic and a verb of giving, whoever asked: "For the
# bank's 'name of your first pet' question I put Bruno", "Mrs Okafor - that's what I gave Barclays as the answer to the
# teacher question", "I told Commerzbank my first car was a Golf", "Answer to BPI's 'mother's maiden name': Dizon".
# An opinion of such questions gives no answer and is kept (:data:`board.language.secrets._ANSWER_EVENT`).
_QUESTION_TOPIC = re.compile(r"\b(?:first\s+(?:pet|car|bike|school|teacher|job|love|street|boss)|pet'?s?\s+name|"
                             r"teacher|maiden\s+name|birth\s*(?:city|place)|city\s+of\s+birth|memorable\s+(?:word|name|"
                             r"date|place)|childhood\s+(?:friend|nickname|street|hero)|best\s+friend|nick\s*name|"
                             r"favou?rite\s+\w+|(?:street|town|city|school|house)\s+(?:\w+\s+){0,2}grew\s+up)\b",
                             re.IGNORECASE)
_GAVE_ANSWER = re.compile(r"\b(?:i\s+(?:put|gave|chose|picked|wrote|typed|entered|used|said|set|give|use|type|enter|"
                          r"say|"
                          r"answer|reply|choose|pick|write)|i\s+told\s+\w+|"
                          r"answer(?:ed)?\s+(?:to|was|is|for)|that'?s\s+what\s+i\s+(?:gave|put|told|said))\b",
                          re.IGNORECASE)
_ASKER = re.compile(r"\b(?:bank|bank's|question|security|verification|app|site|sites|website|account|portal)\b|"
                    r"\b[A-Z][A-Za-z]{2,}\b")


def given_answer(text: str) -> bool:
    """Principle 17: an answer given to a security question by its topic, a verb of giving and who asked."""
    return bool(_QUESTION_TOPIC.search(text) and _GAVE_ANSWER.search(text) and _ASKER.search(text))


def languages_reason(text: str) -> str | None:
    """Why ``text`` tells a secret by the principles of round secrets49 (13 to 17), or None."""
    if identity_number(text):
        return "a national identity number"
    if _ON_THE_BACK.search(text) and _THREE_OR_FOUR.search(text):
        return "a card's verification code"
    if languages_secret(text):
        return "a code or PIN"
    if given_answer(text):
        return "the answer to a security question"
    return None


# --- Round secrets50 (blind8's misses and refusals, read as principles of form and use, not of its words) ----------

# Principle 18: a credential-shaped token beside any verb of getting in, in any language: "she uses sunflower_91 to get
# in", "laptop opens with 'Karachi1965'", "can get into my email with Monsoon_Raga_77", "per entrare nel conto ... uso
# lucadipietro e poi Vespa_1972". A credential's shape: no spaces, letters with two digits or more, a symbol, or a digit
# joined by "_" or "-", five or more characters (judged on look-alikes: "logs in with Google on her Pixel8", "connect
# with Series_A investors", "unlocked level 42 with Mario_Kart" are kept); never an e-mail, a URL, a host or a handle
# with a dot, a version, a model ("T480", "A54") or a SKU in capitals and dashes ("TS-BLK-M-0042"), and never a
# network's name ("the Shah_Home_5G network": taken out first by
# :data:`board.language.secrets._HARMLESS`) nor what one logs in TO or AS ("logs in to GitLab as ravi-ops"). The token
# is the instrument: within four words after "with", "using", "uses", "accepts" (or their words in other languages), or
# before "to get in".
_GET_IN = re.compile(
    r"(?<!\w)(?:get(?:s|ting)?\s+(?:in(?:to)?|onto|on|past)|got\s+(?:in(?:to)?|onto|on|past)|log(?:s|ged|ging)?[\s-]*[io]n|logins?|"
    r"sign(?:s|ed|ing)?[\s-]*[io]n|access(?:es|ed|ing)?|unlock\w*|open(?:s|ed|ing)?|wakes?|lets?\s+\w+\s+in|"
    r"accepts?|enter(?:s|ed|ing)?|"
    # Italian, Spanish, Portuguese, French, German, Dutch, Polish, Turkish, Bahasa, Swahili
    r"entra\w*|acced\w*|acess\w*|sblocc\w*|desbloque\w*|d[ée]verrouill\w*|connect\w*|iniciar\s+sesi[óo]n|"
    r"einlogg\w*|anmeld\w*|entsperr\w*|reinkomm\w*|inlogg\w*|ontgrendel\w*|zalog\w*|wej[śs]\w*|odblok\w*|"
    r"giri[şs]\w*|a[çc]mak|a[çc]\u0131l\w*|masuk|buka|kuingia|kufungua|ingia|fungua)(?!\w)", re.IGNORECASE)
_INSTRUMENT = re.compile(
    r"(?<!\w)(?:with|using|uses?|used|accepts?|takes|uso|usa|usando|con|com|avec|mit|met|przez|ile|dengan|pakai|"
    r"kwa|via)(?!\w)(?:\s+\S+){0,3}?\s+['\"\u2018\u2019\u201c]?$", re.IGNORECASE)
_TO_GET_IN = re.compile(r"^['\"\u2019\u201d]?\s+(?:to|para|pour|per|um|om|żeby|ili|untuk|kuingia)\s+(?:\w+\s+){0,2}?"
                        r"(?:get|log|sign|open|unlock|enter|entrar|entrer|entrare|acceder|rein|in|masuk|wej)",
                        re.IGNORECASE)
_CREDENTIAL = re.compile(r"(?<![\w@./:\\-])[A-Za-z0-9][\w!@#$%^&*.-]{3,}[\w!@#$%^&*]")
_NOT_CREDENTIAL = re.compile(
    r"^(?:\w+[_-]v\d+|v?\d+(?:\.\d+)+[a-z]?|[A-Za-z]{1,3}\d{1,4}[A-Za-z]{0,2}|(?-i:[A-Z0-9]+(?:-[A-Z0-9]+)+)|\d+(?:st|nd|rd|th|gb|tb|mb|"
    r"mah|am|pm|k|x|s)|(?:ios|android|win(?:dows)?|macos|ubuntu|python|java|node|gpt|web|x|ps|usb|wifi|h|mp)\d+\w*)$",
    re.IGNORECASE)
_TARGET_BEFORE = re.compile(r"(?<!\w)(?:as|to|into|on|at|in|from|the|network|ssid|port|host|server|model)\s+$",
                            re.IGNORECASE)


def credential_token(token: str) -> bool:
    """Whether ``token`` has a credential's shape (principle 18): letters with digits or symbols, not a version, a
    model, a SKU, a host or a handle with a dot, an e-mail or a URL."""
    if "." in token or "@" in token or _NOT_CREDENTIAL.match(token) or not re.search(r"[A-Za-z]", token):
        return False
    # two digits or more, a symbol, or a digit joined by "_" / "-" ("Tr4vel-Safe", "studio_team88"): one digit after a
    # name is a model's ("Pixel8", "ProductX2"), and words joined with "_" alone are names ("Mario_Kart", "Series_A")
    digits = len(re.findall(r"\d", token))
    return digits >= 2 or bool(re.search(r"[!@#$%^&*]", token)) or (digits == 1 and bool(re.search(r"[_-]", token)))


def credential_used(text: str) -> bool:
    """Principle 18: a credential-shaped token given as what one gets in with, beside a verb of getting in."""
    if not _GET_IN.search(text):
        return False
    for found in _CREDENTIAL.finditer(text):
        token = found.group(0).rstrip(".,;:!?")
        before, after = text[:found.start()], text[found.end():]
        if not credential_token(token) or _TARGET_BEFORE.search(before):
            continue
        if _INSTRUMENT.search(before) or _TO_GET_IN.match(after):
            return True
    return False


# Principle 18 once more: a credential-shaped token as all that is said after a private account's, a network's or a
# device's name ("the Wi-Fi is Sunflower_99", "Netflix \u2014 Kestrel_22", "Mum's Gmail is mum.k@gmail.com, Roses1955"),
# an e-mail before it or not. Only of what has no public handle: a social network's name ("Instagram: ayesha_k_91") is
# a handle's place, and a network's NAME said so ("the wifi name is Blue_Door_5G") is read out first.
_PRIVATE_ACCOUNT = (r"wi-?fi|wlan|hotspot|router|e-?mail|gmail|outlook|hotmail|yahoo|icloud|apple\s+id|netflix|prime|"
                    r"hotstar|spotify|disney\+?|hulu|laptop|pc|computer|ipad|tablet|vpn|nas|netbanking")
_ACCOUNT_THEN_TOKEN = re.compile(
    r"(?<!\w)(?:" + _PRIVATE_ACCOUNT + r")(?:'s)?\s*(?:password\s+|pw\s+)?(?:is|:|=|\u2014|\u2013|-)\s*"
    r"(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+\s*[,/;]?\s*(?:and\s+)?)?['\"\u2018\u201c]?(?P<tok>\S+?)['\"\u2019\u201d]?"
    r"\s*[.!]?\s*$", re.IGNORECASE)


def account_token(text: str) -> bool:
    """Principle 18: a credential-shaped token as the whole rest of a value after a private account's name."""
    found = _ACCOUNT_THEN_TOKEN.search(text)
    return bool(found and credential_token(found.group("tok")))


# Principle 18 for a device or a host: a user and a password by their form (``x / y``, ``x:y``, ``x and y``, "user x
# pass y") beside an address (an IP, a host name, a share) or a device that has an admin page (a router, a modem, a
# NAS, a DVR, a printer's panel, a portal). The password: credential-shaped, a known weak one ("admin123",
# "password1", "888888", "1234") or four to eight digits. "192.168.0.1:8080" is a host and a port, not a pair.
_HOST = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])|\\\\[\w-]+|"
                   r"(?<![\w@.])[a-z][\w-]*(?:\.[\w-]+)+\.[a-z]{2,}"
                   r"\b|(?<!\w)(?:router|modem|nas|dvr|nvr|cctv|camera|printer|panel|portal|server|switch|firewall|"
                   r"wordpress|cpanel|webmin|console|admin\s+page|access\s+point)(?!\w)", re.IGNORECASE)
_WEAK = re.compile(r"admin\w*|root|toor|guest|password\d*|passw0rd|pass\d*|qwerty\w*|letmein|welcome\d*|changeme|"
                   r"default|abc123|\d{4,8}", re.IGNORECASE)
_PAIR = re.compile(
    r"(?<![\w.@/-])(?P<user>[A-Za-z][\w.@-]{1,30})\s*(?:/|:|,|\band\b|\bpass(?:word)?\b)\s*(?:\bpass(?:word)?\s+)?"
    r"['\"]?(?P<pw>[^\s/'\",]{3,})", re.IGNORECASE)


def host_pair(text: str) -> bool:
    """Principle 18: a user and a password by their form beside a host or a device with an admin page."""
    if not _HOST.search(text):
        return False
    position = 0
    while found := _PAIR.search(text, position):
        # round secrets51: the next pair is looked for from this one's password on, so "portal: zara.k2031 /
        # Rainbow22" reads "zara.k2031 / Rainbow22" after the label's "portal: zara.k2031"
        position = found.start("pw")
        user, password = found.group("user"), found.group("pw").rstrip(".,;")
        if _HOST.fullmatch(user) or (re.fullmatch(r"\d{1,5}", password) and found.group(0).count(":") and \
                "." in user):
            continue  # a host and its port
        if _WEAK.fullmatch(password) or credential_token(password):
            return True
    return False


# Principle 19: a number that is the fact's only code, four to eight digits, right after a device's name ("Zara's iPad:
# 121212", "work phone - 4471", "Mum's Kindle 4420"), or all of a value whose key names a device ("bike_immobiliser:
# nine four four one"). As principle 14 for a service, it is none when a record's word, an amount, a count, a unit or a
# time is beside it ("Lina's phone: 4500 mAh battery", "Reception desk phone extension: 2204" is a place's number,
# "Piet's cell: 0612345678" is a phone number); a year right after a device's name with no mark is its model's year
# ("iPhone 2020"), and a brand's name needs a mark before the code ("Dad's Samsung: 5590"; "Samsung 7000" is a model).
_DEVICE_NOUN = (r"phones?|iphone|ipad|tablets?|laptops?|macbook|imac|pc|computer|desktop|chromebook|kindle|watch|"
                r"console|immobili[sz]er|handphone|celular|telefone|t[ée]l[ée]phone|portable|handy|telefon|tab")
_DEVICE_BRAND = r"samsung|pixel|oneplus|xiaomi|huawei|oppo|vivo|xbox|playstation|ps[45]|mac|tv"
_DEVICE_NAME = re.compile(r"(?<!\w)(?:" + _DEVICE_NOUN + "|" + _DEVICE_BRAND + r")(?!\w)", re.IGNORECASE)
_DEVICE_THEN_CODE = re.compile(
    r"(?<!\w)(?:(?:" + _DEVICE_NOUN + r")(?:\s*(?P<mark>[:=\u2013\u2014-]))?|"
    r"(?:" + _DEVICE_BRAND + r")\s*[:=\u2013\u2014-])"
    r"\s*(?P<code>\d{4,8})(?![\w.,:/-]|\s*(?:[-/]\s*)?\d)", re.IGNORECASE)
_NOT_A_DEVICE_CODE = re.compile(r"(?<!\w)(?:extension|ext|model|series|serial|sn|imei|asset|tag|bill|repair|battery|"
                                r"mah|liya|lia|kharid\w*|bought|paid|rs|mrp|storage|gb|tb|cases?|cover|inch\w*)(?!\w)",
                                re.IGNORECASE)


def device_code(key: str, text: str) -> bool:
    """Principle 19: a code of four to eight digits right after a device's name, or all of a device's key's value."""
    if not (_DEVICE_NAME.search(key) and re.fullmatch(r"\s*\d{4,8}\s*\.?\s*", text)):
        found = _DEVICE_THEN_CODE.search(text)
        if not found or (not found.group("mark") and re.fullmatch(r"(?:19[89]|20[0-3])\d", found.group("code"))):
            return False
    return not (_NOT_A_SECRETS_NUMBER.search(text) or _NOT_A_DEVICE_CODE.search(text) or
                re.search(r"\d[.,:]\d|\d\s*(?:am|pm|h|hrs?|min|days?|km|kg|%)\b", text, re.IGNORECASE))


# Principle 20: a verification code by its form: four to eight digits (as an SMS writes them: "G-582014", "482-913")
# beside a word of verifying in any language ("verification", "confirmation", "security code", "two-step", "2FA",
# "login code", "code de vérification", "Bestätigungscode", "kod weryfikacyjny", "doğrulama kodu", "kode verifikasi").
# A booking's "confirmation number" is a record's; a price per verification SMS has no code.
_VERIFYING = re.compile(
    r"(?<!\w)(?:verif\w*|confirm\w*|security\s+code|log[\s-]?in\s+code|sign[\s-]?in\s+code|two[\s-]?(?:step|factor)|"
    r"2[\s-]?step|2fa|mfa|one[\s-]?time|auth\w*\s+code|v[ée]rification|verificaci[óo]n|verifica[çc][ãa]o|"
    r"best[äa]tigung\w*|sicherheitscode|weryfik\w*|do[ğg]rulama|verifikasi|x[áa]c\s+(?:nh[ậa]n|minh)|"
    r"verificatie\w*)(?!\w)", re.IGNORECASE)
_CONFIRMATION_RECORD = re.compile(r"\bconfirmation\s+(?:number|no|num|#|id)\b", re.IGNORECASE)


def verification_code(text: str) -> bool:
    """Principle 20: a code of four to eight digits beside a word of verifying."""
    if not _VERIFYING.search(text) or _CONFIRMATION_RECORD.search(text) or _NOT_A_SECRETS_NUMBER.search(text):
        return False
    text = re.sub(r"(?<![\w-])[A-Z]{1,2}-(\d{4,8})(?![\w-])", r"\1", text)
    text = re.sub(r"(?<![\d-])(\d{3})[ -](\d{3})(?![\d-])", r"\1\2", text)
    return any(len(c) >= 4 for c in codes(text, numbered=True))


# Principle 21: more identity numbers by their checksum or their form, with no word: Poland's PESEL (eleven digits, a
# birth date with the century in the month, a weighted check digit), Brazil's CPF written plain (two check digits),
# France's NIR (fifteen digits: sex, year, month, department, commune, order, key 97 - n mod 97; or written in its
# groups "1 85 05 78 006 084 36"), Egypt's national ID (fourteen digits: the century, a birth date, a governorate),
# South Africa's ID (thirteen digits: a birth date, citizenship, Luhn), Sweden's personnummer (a birth date, a dash,
# four digits, Luhn), Chile's RUT written with its dots and check digit (mod 11), and Italy's codice fiscale (its
# letters and digits in their places and its check letter). An order's, a tracking's or a meter's number
# (:data:`_RECORD_BEFORE`) and a phone's are never read so (principle 15's guards). Under an ID's word in the KEY
# ("pesel: 85071503457", whose check digit its writer got wrong) eight to eighteen digits are the ID. Random digits
# with no word (``ref NNN``): 11 digits 1.2 % -> 3.4 % read as IDs (PESEL and CPF each pass about 1 in 100), 13 to 15
# digits unchanged (Luhn already read them as cards).
_RECORD_BEFORE = re.compile(r"(?<!\w)(?:order|invoice|po|tracking|parcel|shipment|awb|booking|ticket|serial|sn|imei|"
                            r"meter|sku|receipt|policy|claim|consumer|customer|bestellung|zam[óo]wienie|pedido|"
                            r"commande|ordine|sipari[şs])\W*(?:no\.?|nr\.?|number|num|#)?\W*$", re.IGNORECASE)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _date_ok(yy: str, mm: int, dd: str) -> bool:
    return 1 <= mm <= 12 and 1 <= int(dd) <= 31 and yy.isdigit()


def pesel_ok(digits: str) -> bool:
    """Poland's PESEL: a birth date (the month carries the century) and a weighted check digit."""
    if len(digits) != 11:
        return False
    month = int(digits[2:4]) % 20
    check = (10 - sum(int(a) * w for a, w in zip(digits, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), strict=False)) % 10) % 10
    return _date_ok(digits[:2], month, digits[4:6]) and int(digits[2:4]) // 20 in (0, 1, 4) and check == int(digits[10])


def cpf_ok(digits: str) -> bool:
    """Brazil's CPF: eleven digits, not one digit repeated, two check digits."""
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    d = [int(c) for c in digits]
    first = sum(a * b for a, b in zip(d[:9], range(10, 1, -1), strict=True)) * 10 % 11 % 10
    second = sum(a * b for a, b in zip(d[:10], range(11, 1, -1), strict=True)) * 10 % 11 % 10
    return first == d[9] and second == d[10]


def nir_ok(digits: str) -> bool:
    """France's NIR: sex, year, month, department, commune, order, then its key (97 - n mod 97)."""
    if len(digits) != 15 or digits[0] not in "12" or not 1 <= int(digits[3:5]) <= 12:
        return False
    return 97 - int(digits[:13]) % 97 == int(digits[13:])


_EGYPT_GOVERNORATES = frozenset({"01", "02", "03", "04", "11", "12", "13", "14", "15", "16", "17", "18", "19", "21",
                                 "22", "23", "24", "25", "26", "27", "28", "29", "31", "32", "33", "34", "35", "88"})


def egypt_id_ok(digits: str) -> bool:
    """Egypt's national ID: the century (2 or 3), a birth date, a governorate, a running number."""
    return len(digits) == 14 and digits[0] in "23" and _date_ok(digits[1:3], int(digits[3:5]), digits[5:7]) and \
        digits[7:9] in _EGYPT_GOVERNORATES


def sa_id_ok(digits: str) -> bool:
    """South Africa's ID: a birth date, a citizenship digit (0 or 1), Luhn."""
    return len(digits) == 13 and _date_ok(digits[:2], int(digits[2:4]), digits[4:6]) and digits[10] in "01" and \
        _luhn_ok(digits)


_NIR_GROUPS = re.compile(r"(?<![\w-])[12] \d\d (?:0[1-9]|1[0-2]) (?:\d\d|2[AB]) \d{3} \d{3} \d\d(?![\w-])")
_PERSONNUMMER = re.compile(r"(?<![\w-])(?:19|20)?(\d{6})[-+](\d{4})(?![\w-])")
_RUT = re.compile(r"(?<![\w.])(\d{1,2}\.\d{3}\.\d{3})-([\dkK])(?![\w])")
_CODICE_FISCALE = re.compile(r"(?<![A-Z0-9])[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z](?![A-Z0-9])")
_CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def codice_fiscale_ok(code: str) -> bool:
    """Italy's codice fiscale: its check letter over the first fifteen characters."""
    total = 0
    for i, char in enumerate(code[:15]):
        value = int(char) if char.isdigit() else ord(char) - ord("A")
        total += _CF_ODD[value] if i % 2 == 0 else value
    return chr(ord("A") + total % 26) == code[15]


def _rut_ok(body: str, check: str) -> bool:
    total, factor = 0, 2
    for char in reversed(body.replace(".", "")):
        total, factor = total + int(char) * factor, factor + 1 if factor < 7 else 2
    rest = 11 - total % 11
    return check.upper() == ("0" if rest == 11 else "K" if rest == 10 else str(rest))


def more_identity_numbers(text: str) -> bool:
    """Principle 21: an identity number of the countries above by its checksum or its form."""
    if any(codice_fiscale_ok(m) for m in _CODICE_FISCALE.findall(text.upper())) or _NIR_GROUPS.search(text):
        return True
    if any(_rut_ok(body, check) for body, check in _RUT.findall(text)):
        return True
    if _COMPANY.search(text) or _PHONE.search(text):
        return False
    for found in _PERSONNUMMER.finditer(text):
        digits = found.group(1) + found.group(2)
        if _RECORD_BEFORE.search(text[:found.start()]):
            continue  # round secrets51: "Order 240101-5512 shipped" is an order's number
        if _date_ok(digits[:2], int(digits[2:4]), digits[4:6]) and _luhn_ok(digits):
            return True
    for found in _LONG_DIGITS.finditer(text):
        digits = re.sub(r"\D", "", found.group(0))
        if _RECORD_BEFORE.search(text[:found.start()]) or re.search(r"\+\d{1,3}[ -]?$", text[:found.start()]):
            continue
        if pesel_ok(digits) or cpf_ok(digits) or nir_ok(digits) or egypt_id_ok(digits) or sa_id_ok(digits):
            return True
    return False


def secrets50_reason(key: str, text: str) -> str | None:
    """Why ``text`` (under ``key``'s words) tells a secret by the principles of round secrets50 (18 to 21), or None.
    A code, a verification code and an ID need four digits or more, an ID seven: the rules that read them are not run
    on the many facts with fewer (the filter's cost)."""
    digits = sum(char.isdigit() for char in text)
    if credential_used(text) or account_token(text):
        return "a password given to get in"
    if host_pair(text):
        return "a login and password"
    if digits < 4:
        return None
    if verification_code(text):
        return "a one-time code received"
    if digits >= 7 and not _COMPANY.search(key) and (more_identity_numbers(text) or (
            _ID_WORDS.search(key) and _LONG_DIGITS.search(text) and not _COMPANY.search(text))):
        return "a national identity number"
    if device_code(key, text):
        return "a device's code"
    return None


class Lazy:
    """A pattern compiled on its first use, not at import (round secrets51: the filter's import cost; most facts never
    reach the rules that need these)."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def sub(self, repl: str, text: str) -> str:
        return self.compiled.sub(repl, text)


# Round secrets51 (principles 23 to 29): blind9's and blind10's misses read as principles of form and use.
#
# Principle 23: a wallet's words need no number and no name: six or more words, every one of them a BIP-39 word and
# none of the commonest English words (:data:`board.language.secrets._NOT_SEED`), run to the end of the value ("first
# six: actor brisk canyon dolphin elbow fabric", "the rest is wagon jungle lemon pilot hammer silver"). A list its
# label names ("spelling words: ...", "mood board: ...") is kept by the caller (``_word_list``).
_WORD_TAIL = Lazy(r"(?:^|[\s:=\u2014\u2013-])((?:[A-Za-z]{3,8}[ \t]+){5,}[A-Za-z]{3,8})\s*[.!]?\s*$")
SEED_TAIL_WORDS = 6


#: What says the words are a part of something given (a wallet's, unnamed): "first six", "the rest", "words 7 to 12",
#: "the other half", "backup"; the words follow a mark (":", "is", "are").
_PART_OF = re.compile(r"(?<!\w)(?:first|last|rest|half|other|remaining|second|words?|backup|part|phrase|seed|recovery|"
                      r"\d{1,2}\s*(?:to|-|\u2013)\s*\d{1,2})(?!\w)", re.IGNORECASE)
_MARK_BEFORE = re.compile(r"(?:[:=\u2014\u2013-]|(?<!\w)(?:is|are|was|were))\s*$", re.IGNORECASE)


def seed_tail(text: str, common: frozenset[str] | set[str], named: bool = False) -> bool:
    """Principle 23: six or more BIP-39 words, and only them, as the end of ``text`` (none of ``common``), given after
    a mark by what says they are a part of something ("first six:", "the rest is") or under a wallet's key (``named``):
    "We want a simple clean bright happy family room" and "Ingredients: garlic onion ..." are no wallet's."""
    found = _WORD_TAIL.search(text) if text.count(" ") >= SEED_TAIL_WORDS - 1 else None
    if not found:
        return False
    before = text[:found.start(1)]
    if not named and not (_MARK_BEFORE.search(before) and _PART_OF.search(before)):
        return False
    run = 0
    for word in reversed(found.group(1).split()):
        if word.lower() not in _BIP39 or word.lower() in common or (word[:1].isupper() and run):
            break
        run += 1
    return run >= SEED_TAIL_WORDS


# Principle 24: a short code by what is done with it: a device, a lock, a till or a terminal "takes" it or "needs" it
# ("The CCTV DVR in the shop takes 3391 after you hit menu", "The Yale on the patio door takes 8066"), an override is
# one ("supervisor override on the Clover is 2580"), a TAN of any bank's kind authorises a transfer ("TAN 482913 for the
# transfer", "mTAN: 551902"). A bare number is the object, with no unit, time, price or count after it ("The dishwasher
# takes 3 hours", "takes A4 and letter", "override needed for refunds over $500" keep).
_TAKES_CODE = Lazy(
    r"(?<!\w)(?:takes|needs|wants|accepts|asks\s+for|uses)\s+(?:the\s+code\s+|code\s+)?[#*]?(?P<code>\d{4,8})#?"
    r"(?![\w.:/%-]|,\d|\s*(?:[-/x]\s*)?\d|\s+(?:[a-z]+\s+)?(?:hours?|hrs?|mins?|minutes?|seconds?|secs?|days?|weeks?|"
    r"months?|years?|people|persons|guests|pages?|sheets?|copies|cups?|litres?|liters?|ml|kg|g|w|watts?|volts?|mah|"
    r"rpm|dpi|steps?|calories|kcal|rupees|rs|usd|eur|dollars?|euros?|pounds?|units?|items?|points?|credits?|coins?|"
    r"tokens?|tickets?|orders?|bookings?|reviews?|users?|km|miles?|notes|bills|cash|rupee|naira|cedis|shillings?|pesos|"
    r"reais|rand|yen|won|baht|dirhams?|riyals?|lira|zloty|kr|kroner|kronor|transactions?|payments?|swipes|scans|"
    r"requests?|calls|messages|visitors|cars|vehicles|plates|sales)\b)", re.IGNORECASE)
_OVERRIDE = Lazy(r"(?<!\w)override\b[^.:]{0,50}?(?:\bis|:|=|\u2014|-)\s*[#*]?"
                       r"(?P<code>\d{3,8})#?\s*[.!]?\s*$", re.IGNORECASE)
#: What takes a code: a device, a lock, a till or a terminal, an admin page (principle 19's and 18's words too).
_TAKES_CODES = Lazy(r"(?<!\w)(?:doors?|gates?|locks?|yale|alarms?|safes?|lockers?|keypads?|intercoms?|tills?|"
                          r"registers?|terminals?|pos|atms?|panels?|garages?|shutters?|padlocks?|kiosks?|lock\s*box|"
                          r"key\s*safe|vault|immobili[sz]er|buzzer)(?!\w)", re.IGNORECASE)
_TAN = re.compile(r"(?<![A-Za-z])(?:m|i|e|sms|push|chip|photo|mobile)?-?TAN(?![A-Za-z])")


_TAKING = re.compile(r"takes|needs|wants|accepts|asks|uses")


def code_used(text: str) -> bool:
    """Principle 24: a code a device takes, an override's code, a TAN."""
    lower = text.lower()
    takes = _TAKES_CODE.search(text) if _TAKING.search(lower) else None
    found = (takes if takes and (_TAKES_CODES.search(text) or _DEVICE_NAME.search(text) or _HOST.search(text))
             else None) or (_OVERRIDE.search(text) if "override" in lower else None)
    if found and not _NOT_A_SECRETS_NUMBER.search(text):
        return True
    return bool(_TAN.search(text)) and any(4 <= len(c) <= 8 and c.isdigit() for c in codes(text, numbered=True))


# Principle 25: a user and then a password said as a pair in a voice note ("it's jmartinez_ny and then, um,
# BrooklynBridge77"): a one-word user, "and then" (fillers between or not), a credential-shaped token; and a credential
# after a service's name with a word of any language between ("lösenordet till routern är Älgen4ever", "Hotmail ya mama
# ni Kilimanjaro77", "Gmail yelij qal: Lalibela_2012", "Outlook-kontoen er Nordlys1990"): the token is all that is left
# of the value, the words between lowercase (a language's small words, never a brand's or a model's name: "the router
# is TP-Link Archer_C6" keeps). A credential's shape here also counts a digit inside a word of mixed case ("Älgen4ever":
# a word with a digit for a letter); a passphrase's shape, a capitalised word, digits and a capitalised word
# ("Selam2015Addis"), is one as all of a value after a label and a colon.
_THEN_PAIR = Lazy(
    r"(?<![\w.@/-])(?P<user>[A-Za-z][\w.@+-]{1,40})\s*,?\s+(?:and\s+)?then\b[\s,]*"
    r"(?:(?:uh+|um+|er+|erm|like|so)[\s,]+)*['\"\u2018\u201c]?(?P<pw>[^\s'\",]{5,})", re.IGNORECASE)
_PAIR_NOT_USER = Lazy(r"^(?:the|a|an|it|this|that|and|or|plan|plus|first|next|later|now|year|month|week|day|"
                            r"basic|pro|free|trial|monthly|yearly|is|was)$", re.IGNORECASE)
_SERVICE_ACCOUNT = (_PRIVATE_ACCOUNT + r"|zoom|dropbox|paypal|venmo|amazon|ebay|kindle|skype|proton\w*|onedrive|"
                    r"google\s+drive|office\s*365|microsoft|xfinity|comcast|verizon|at&t|router\w*")
_SERVICE_THEN_TOKEN = Lazy(
    r"(?<!\w)(?:" + _SERVICE_ACCOUNT + r")(?:[-'\u2019]?\w{0,8})?(?:\s+(?-i:[^\s\dA-Z]{1,12})){0,3}?\s*"
    r"(?:[:=\u2014\u2013-]\s*)?['\"\u2018\u201c]?(?P<tok>[^\s'\"]{5,}?)['\"\u2019\u201d]?\s*[.!]?\s*$", re.IGNORECASE)
_PASSPHRASE = re.compile(r"^[^\W\d_][^\W\d_]*\d{1,6}[^\W\d_]+$")
_LABEL_THEN_PASSPHRASE = re.compile(r"^\s*[^\W\d][^\W\d]*(?:\s+[^\W\d]+){0,3}\s*:\s*(?P<tok>\S+?)\s*[.!]?\s*$")


def strong_token(token: str) -> bool:
    """A credential's shape (:func:`credential_token`), or a word of mixed case with digits inside it."""
    if credential_token(token):
        return True
    return bool(_PASSPHRASE.match(token)) and token != token.lower() and token != token.upper() and \
        not _NOT_CREDENTIAL.match(token)


#: What a token after a service's name is when a word says so: a serial, a model, a version, a handle, a host.
_NAMED_NOT_SECRET = Lazy(r"(?<!\w)(?:serial|model|sn|imei|id|number|no|nr|version|ver|firmware|fw|sku|asset|tag|"
                               r"name|handle|user(?:name)?|login|ip|host|hostname|port|mac|ssid|network|plan|order|"
                               r"ticket|invoice|account\s+(?:no|number)|case|ref)(?!\w)", re.IGNORECASE)


def pair_said(text: str) -> bool:
    """Principle 25: a user and then a password, or a credential as the end of a value after a service's name."""
    for found in _THEN_PAIR.finditer(text) if "then" in text.lower() else ():
        password = found.group("pw").rstrip(".,;!?")
        if _PAIR_NOT_USER.match(found.group("user")) or re.fullmatch(r"[A-Z][a-z]+", found.group("user")):
            continue  # a plain capitalised word is a place's or a person's name ("to Berlin and then Munich2025")
        if credential_token(password) and \
                not re.match(r"v\d", password, re.IGNORECASE):
            return True
    last = text.split()[-1].strip("'\"\u2018\u2019\u201c\u201d.!") if text.split() else ""
    named = _SERVICE_THEN_TOKEN.search(text) if strong_token(last) else None
    if named and strong_token(named.group("tok")) and not re.search(r"[_-]v\d+$", named.group("tok")) and \
            not _NAMED_NOT_SECRET.search(named.group(0)[:named.start("tok") - named.start()]) and \
            not _TARGET_BEFORE.search(text[:named.start("tok")]):
        return True
    labelled = _LABEL_THEN_PASSPHRASE.match(text)
    return bool(labelled and _PASSPHRASE.match(labelled.group("tok")) and
                re.search(r"[A-Z]", labelled.group("tok")[1:]) and labelled.group("tok")[:1].isupper())


# Principle 26: the answer to a bank's question, the bank named ("City where I was born, for the Wells Fargo question:
# Tegucigalpa", "First car, HSBC's question: Corolla"): "for the <Name> question" or "<Name>'s question", then a mark
# and the answer. With no mark and no answer it is talk ("Wells Fargo's security question about my first job annoys
# me").
_QUESTION_TOPIC_ANY = Lazy(r"(?<!\w)(?:born|birth\w*|first|maiden|pet|school|teacher|street|car|city|town|"
                                 r"hometown|mascot|aunt|uncle|nick\s*name|friend|favou?rite|childhood|memorable|"
                                 r"security|verification|grand\w+|mother|father|mum|mom|dad|honeymoon|wedding)(?!\w)",
                                 re.IGNORECASE)
_NAMED_QUESTION = Lazy(
    r"(?:\bfor\s+(?:the\s+|my\s+)?(?:[A-Z][\w&.-]*\s+){1,3}|\b[A-Z][\w&.-]+(?:\s+[A-Z][\w&.-]+){0,2}['\u2019]s\s+)"
    r"(?i:(?:security\s+|verification\s+|secret\s+)?question)\s*(?::|=|\u2014|\u2013|-|\bis\b|\bwas\b)\s*\S|"
    # "the one Chase asks about when I forget stuff: Biscuit": the bank asks, then the answer after a mark
    r"\b[A-Z][\w&.-]+(?:\s+[A-Z][\w&.-]+){0,2}\s+(?i:asks?|asked)\b[^:]{0,40}:\s*\S")
#: A security question's own topic (a bank "asks about" one; "the first sprint" is no question's).
_ASKED_TOPIC = Lazy(r"(?<!\w)(?:first\s+(?:pet|car|school|teacher|job|street|boss|love|concert|house)|pet'?s?\s+name|"
                    r"maiden|born|birth\s*(?:place|city|town)|childhood|mascot|memorable|favou?rite\s+(?:teacher|"
                    r"aunt|uncle|book|film|movie|food|colou?r|place|team|band|singer))(?!\w)", re.IGNORECASE)
_TALK_OF_IT = re.compile(r"annoy|hate|useless|silly|stupid|pointless|irritat", re.IGNORECASE)


# Principle 27: a combination's turns in any language, one table of direction words (left / right in Spanish,
# Portuguese, French, German, Dutch, Italian, Turkish, Polish, Swahili, Bahasa): two turns or more, the number before
# the word or after it ("38 para direita, 12 para esquerda", "15 nach links", "rechts 22"), to both sides ("12 links in
# the doc, 4 links broken" are no turns).
_LEFT_WORDS = (r"izquierda|esquerda|gauche|links|sinistra|sola|sol|lewo|w\s+lewo|kushoto|kiri|v[äa]nster|"
               r"vasemmalle")
_RIGHT_WORDS = r"derecha|direita|droite|rechts|destra|sa[ğg]a|sa[ğg]|prawo|w\s+prawo|kulia|kanan|h[öo]ger|oikealle"
_DIRECTIONS = _LEFT_WORDS + "|" + _RIGHT_WORDS
_TURN_ANY = Lazy(r"(?<![\w.,])\d{1,2}\s+(?:(?:\w{1,4}\s+){0,2})(?P<after>" + _DIRECTIONS + r")(?!\w)|"
                       r"(?<!\w)(?P<before>" + _DIRECTIONS + r")\s+(?:\w{1,3}\s+)?\d{1,2}(?![\w.,]\d)", re.IGNORECASE)
_LEFT = Lazy(r"^(?:" + _LEFT_WORDS + r")$", re.IGNORECASE)


def turns_said(text: str) -> bool:
    """Principle 27: two turns or more, to the left and to the right ("12 links, 4 links" are links)."""
    sides = {bool(_LEFT.match(found.group("after") or found.group("before"))) for found in _TURN_ANY.finditer(text)}
    return len(sides) == 2


# Principle 28: an identity number by its shape with a birth date inside and a check, where the form is rare enough:
# Korea's resident registration number (YYMMDD-GNNNNNN: a birth date, a dash, a sex-and-century digit 1-8; its last
# digit a checksum, read by form as blind9's writer got it wrong), Finland's henkilötunnus (DDMMYY, a century sign,
# three digits, a check character mod 31), Norway's fødselsnummer (DDMMYY and five digits, two mod-11 checks). Never
# after a record's word, a phone's or a firm's (principle 15's guards).
_RRN = re.compile(r"(?<![\w-])(\d{2})(\d{2})(\d{2})-([1-8])\d{6}(?![\w-])")
_HETU = re.compile(r"(?<![\w-])(\d{2})(\d{2})(\d{2})[-+A](\d{3})([0-9A-Y])(?![\w-])")
_HETU_CHECK = "0123456789ABCDEFHJKLMNPRSTUVWXY"


def fodselsnummer_ok(digits: str) -> bool:
    """Norway's fødselsnummer: a birth date (DDMMYY) and two mod-11 check digits."""
    if len(digits) != 11 or not _date_ok(digits[4:6], int(digits[2:4]), digits[:2]):
        return False
    d = [int(c) for c in digits]
    k1 = 11 - sum(a * b for a, b in zip(d[:9], (3, 7, 6, 1, 8, 9, 4, 5, 2), strict=True)) % 11
    k2 = 11 - sum(a * b for a, b in zip(d[:10], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=True)) % 11
    return k1 % 11 == d[9] and k2 % 11 == d[10]


def dated_identity_number(text: str) -> bool:
    """Principle 28: a Korean, Finnish or Norwegian identity number by its shape and check."""
    if _COMPANY.search(text) or _PHONE.search(text):
        return False
    for found in _RRN.finditer(text):
        if _date_ok(found.group(1), int(found.group(2)), found.group(3)) and \
                not _RECORD_BEFORE.search(text[:found.start()]):
            return True
    for found in _HETU.finditer(text.upper()):
        day, month, year, order, check = found.groups()
        if _date_ok(year, int(month), day) and _HETU_CHECK[int(day + month + year + order) % 31] == check and \
                not _RECORD_BEFORE.search(text[:found.start()]):
            return True
    for found in _LONG_DIGITS.finditer(text):
        digits = re.sub(r"\D", "", found.group(0))
        if fodselsnummer_ok(digits) and not _RECORD_BEFORE.search(text[:found.start()]) and \
                not re.search(r"\+\d{1,3}[ -]?$", text[:found.start()]):
            return True
    return False


def secrets51_reason(text: str) -> str | None:
    """Why ``text`` tells a secret by the principles of round secrets51 (24 to 28), or None (23 is read by the caller,
    beside the other wallet rules)."""
    if pair_said(text):
        return "a login and password"
    lower = text.lower()
    if "question" in lower and _NAMED_QUESTION.search(text) and _QUESTION_TOPIC_ANY.search(text):
        return "the answer to a security question"
    if " ask" in lower and _NAMED_QUESTION.search(text) and _ASKED_TOPIC.search(text) and \
            not _TALK_OF_IT.search(text):
        return "the answer to a security question"
    digits = sum(char.isdigit() for char in text)
    if digits >= 2 and turns_said(text):
        return "a lock's combination"
    if digits >= 3 and code_used(text):
        return "a code or PIN"
    if digits >= 9 and dated_identity_number(text):
        return "a national identity number"
    return None
