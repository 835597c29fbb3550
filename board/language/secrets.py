"""What may never be kept about a person: the memory's secret filter (:func:`secret_reason`).

A secret is anything that opens something or moves money when someone else reads it: passwords and
passphrases, PINs, door / gate / alarm / garage / lock / safe codes and combinations, one-time and backup
codes, wallet seed or recovery words, API keys and tokens, card numbers with their expiry and CVV, bank
account numbers and IBANs, government ID numbers, gift card codes, the answers to security questions
("mother's maiden name", "first pet"), and the secrets in Sabha's own config (:data:`board.masking.REDACTOR`).
Not secrets, and kept: a bank branch's IFSC or SWIFT / BIC code and a GSTIN (printed on cheques and invoices), a
handle under a username's key, a date under an expiry key ("passport expiry: 2031"), postal codes (a ZIP, a
postcode, an Indian PIN
code of six digits with no card, bank or lock nearby), area / country / airport codes, dress codes, promo
and referral codes (made to be shared), addresses, phone numbers, e-mail addresses, a funding stage
("seed round"), naming a password manager, a provider, method, country, budget or amount under a secret's
word ("otp provider: MSG91", "sign in method: Google", "token budget: 50k tokens per day").

Facts arrive the way models write them, so both sides are read as words: a key's ``card_pin``,
``door-code``, ``doorCode`` and ``wifiPassword`` are "card pin", "door code", "door code", "wifi
password". The checks, in order:

- no key rule when the key's last word says it is about something else (:data:`_HARMLESS_HEAD`:
  provider, method, country, budget, amount, and the tool or place that handles a secret: app, gateway, page,
  flow...: "2fa app", "login page");
- the key names a secret (:data:`_SECRET_KEY`; ``expiry``, ``exp`` on their own too), or,
  being a short label whose last word is a code or PIN that is not a harmless one (:data:`_HARMLESS`;
  "code style" names a style); a key naming a lock or a keypad (door, alarm, safe, lockbox, combination,
  atm, entry, access...) over a value holding a code of digits; an expiry key over an MM/YY date; an
  admin / login key over "user password"; a login / secret / wifi / seed / token / credentials / recovery
  key, unless its value is a plain sentence about the thing ("wants faster wifi in the office", "customers
  say it is slow"; an amount such as "$400k" or a year said as a date, "in 2025", is no code): a document
  or a scheme named alone (passport, aadhaar, OTP, 2FA, a bare "code") is such a key, its number ("passport
  number") is a secret's key; a door's, gate's, room's or locker's number is an address; no key rule over
  a card's or account's last four digits ("ends in 7712");
- the value names a secret's kind (OTP, CVV, API key, seed phrase...) other than in a plain sentence that only
  names it ("Twilio for OTP delivery"; "my seed phrase is ..." introduces it);
- the value introduces one: a password word (``pw``, ``pwd``, ``password``...; ``key`` only after a mark or
  "is": "key is monsoon") after a mark or "is" followed by
  anything but a word saying how the password is ("is too weak"), or right before a password-shaped word, a
  last word, or in a value that is no sentence ("I forgot my password yesterday" names none; ``pass`` or a
  bare ``secret`` only before a word with a digit or a symbol; "Passcode Labs" inside a sentence is a
  name); a code word (``pin``, a bank's ``mpin`` / ``tpin`` / ``ipin``,
  ``code``, ``combo``, ``keypad``, ``atm``...) followed by a code of three or more digits or a mix of
  letters and digits; a lock's name (door, gate, safe...) with a mark (``:``, ``-``, ``=``) or "opens
  with" before such a code ("gate 122" is a gate's number); whatever "opens / unlocks with" a code of digits,
  digits used "to open" something; a lock's name said to "be" four or more digits ("alarm is 5577"); digits
  with a keypad's ``#`` after or ``*`` before them ("2211#");
  a device that exists to be opened by a code (lockbox, key safe, padlock, keypad) beside one; digits keyed
  in ("buzz 4417", "disarm with 5570"); two or more dial turns ("left 12 right 7"); ``user / Pa55word!``
  pairs, a login "with" or "," a password-shaped word, a handle with digits then a phrase with a digit; any
  word shaped like a password (letters, digits and a symbol inside: "Sunny@123"); a gift card's code
  (``AQ7X-9PLM-22RT``);
- a run of twelve or more plain words, whatever their case or punctuation (a wallet's seed phrase);
- a card number (13 to 19 digits passing Luhn: an order or tracking number that fails it is kept), an
  IBAN (mod 97), an ID number's shape, an API key or token's shape, a URL with a password in it.

A sentence someone said (:func:`sentence_reason`, what :func:`board.language.statements.heard` asks) is
read by the value's rules only: "I work at Vault Capital." names no vault.

Digits said as words ("nine three seven two", "double four", Hindi "ek do teen"), a keypad's "star 1 9 7 0" and
single digits spaced out are read as the digits they say (:func:`spoken_digits`) before any rule: a code read aloud is
the code. A code may be given by any verb that gives it a value ("changed to 6621", "is now", "reset to", Hindi
"hai") or told before its name ("4455 is my card pin"). A phone's unlock pattern is a password drawn ("unlock
pattern: L shape ..."); a screen lock over a face or a fingerprint has none. Kept (round classify46): a sort code
(a branch's, like an IFSC), a pin dropped on a map, a queue's token number ("token no 37 at the RTO"), a pass named
by what it lets one ride or enter ("travel pass", "Eurail pass"), an e-mail address alone under a login's key (the
name one logs in with), a bank named under a key whose last word is "bank", an amount of money ("the locker fee went
up to 3500 a year", "rent: 2800 a year"). An IBAN stays a secret (it holds the account's number; two earlier sets
label it so, blind3's writer did not: failing closed costs one harmless refusal, a wrong guess the other way a
secret).

Round secrets46 (blind4's misses, as principles; each stated where it is applied): a key or a value that says the
fact is the ANSWER to a security / verification / challenge question, or is given "for verification", makes the value
a secret whatever it is (a pet's name, a school, a city); backup / recovery / authenticator / 2FA codes are secrets in
any words ("backup numbers 4471-2290"); an unlock pattern in any form is a password drawn (digits on a grid, a letter
or a shape drawn or swiped to get into a device, a knock code). A secret's KIND named with no VALUE given is an event
("changed my gmail password yesterday", "OTP SMS arrive late", "reset the iPad passcode"): a key whose last word names
an event (change, reset, issue, delay, blocked...) over a plain sentence is no secret's key. Public codes: a postal PIN
said with its place or closing an address ("PIN 400050, Bandra West"), any key or value saying "pin code" over six
digits or none with no card, bank or lock in it; HSN / SAC (tax classification), MICR, tariff codes; a place pinned
on a map ("pinned on Google Maps"); a number masked but for its last four ("ending in ...7781", "xxxx4410").

Round secrets47 (blind5's misses, read as principles of a secret's FORM and USE across languages, in
:mod:`board.language.secret_use`, each stated where it is applied): a code given for opening, typing, pressing,
joining or asked for (digits joined, spaced, dashed or said in English, Hindi, Bengali, Tamil, Telugu, Kannada,
Malayalam, Marathi, Gujarati or Punjabi words) or set on a lock of any object (a diary, a briefcase, a scooter's boot,
a "tijori"); a code received to prove it is you (by SMS, from a bank, "valid for 10 minutes"); "don't tell anyone" /
"kisi ko mat batana" beside a code; a card number by its form (Amex's 4-6-5 groups); an authenticator's base32 seed;
a security question's answer in any language ("sawaal ka jawab", "(bank security)"); parental and screen-time codes.
Kept: a number masked but for its last four under any key ("XXXX XXXX 9021"), a policy's or an order's number given as
a record, an event about a secret's kind in any language with no code given ("password bhool gaya", "OTP nahi aa raha,
complaint kiya", "token expires on 30 June"), the kind talked about ("OTP ab WhatsApp pe bhi aata hai"), a token of
appreciation, a tweet pinned, an exam passed, a pin badge.

Round secrets50 (blind8's misses, in :mod:`board.language.secret_use` principles 18 to 22): a credential-shaped token
given as what one gets in with, a user / password pair beside a host, a code right after a device's name, a verification
code by its form, more identity numbers by checksum, digits said in thirteen more languages and a dial's numbers in
words with a voice note's fillers between them. Kept: a pass named with what it is for ("a speaker pass for
TechSparks"), a secret's kind after "per" (a price), a network's name, a port, who holds the keys ("custody", "holders"
as a key's last word), a 📍 place.

Where a fact is ambiguous it is refused ("alarm: 0530" may be a wake-up time; it is taken for a code).

Beside these rules a learned model (:mod:`board.language.secret_model`, trained on the labelled sets; since round
secrets52 it reads the fact's character and word n-grams beside its shapes) scores each fact the rules keep; the fact is
refused when a rule refuses it or the model scores it from its threshold on (``SecretModel.decide``: the shipped model
never lets through what a rule caught, so a fact a rule refused is not scored). Its reason then is "looks like a secret
to the learned model".

The labelled sets in ``tests/data/memory_secrets*.jsonl`` measure it (tests/test_memory_secrets.py).
"""

from __future__ import annotations

import functools
import re

from board.language.secret_model import SecretModel, secret_model
from board.language.secret_use import (
    DIGIT_WORDS,
    HASH_WORDS,
    MASKED,
    STAR_WORDS,
    TENS_WORDS,
    Lazy,
    bip39_share,
    event_only,
    form_reason,
    given_answer,
    languages_reason,
    marks_out,
    masked_out,
    native_to_latin,
    ports_out,
    records_out,
    secrets50_reason,
    secrets51_reason,
    seed_tail,
    strong_token,
    talk_only,
    use_reason,
)
from board.masking import mask

__all__ = ["as_read", "secret_reason", "sentence_reason"]

#: A pin dropped on a map marks a place: "dropped a pin for the new office", "location pin", "pinned on Google Maps"
#: (round secrets46). One reading, used to take the phrase out of a value (:data:`_HARMLESS`) and to say a key's
#: "pin" is that one (:data:`_MAP_PIN`) (round secrets47, the duplicates tool's D7).
_MAP_PIN_SAID = (r"\b(?:drop(?:ped|ping|s)?|shared?|sent|send|sending)\s+(?:\w+\s+)?(?:a|the)\s+"
                 r"(?:location\s+|map\s+)?pin\b|\b(?:location|map|maps|google\s+maps)\s+pins?\b|"
                 r"\bpin\s+on\s+(?:the\s+)?map\b|"
                 r"\bpinned\s+(?:[\w'&-]+,?\s+){0,6}?(?:on|in|to)\s+(?:the\s+)?(?:google\s+|apple\s+)?maps?\b")
#: "pin" as a verb on a post: "Pin the launch tweet to the company profile", "Pinned message mein link hai" (round
#: secrets47): taken out of a value (:data:`_HARMLESS`), and under a key's "pin" it is that pin (:data:`_PINNED_POST`).
_PINNED_POST_SAID = (
    r"(?:\bpinned|\bpinning|(?:^\s*|\b(?:to|please|will|should|i|we|can|must|let's|always|then)\s+)pin)\s+"
    r"(?:(?:the|this|that|a|an|my|our|it|these|those)\s+)?(?:[\w'-]+\s+){0,3}?"
    r"(?:tweets?|posts?|messages?|notes?|comments?|tabs?|chats?|announcements?|threads?|stories)\b(?!\s*[:=-]?\s*\d)")
_PINNED_POST = re.compile(_PINNED_POST_SAID, re.IGNORECASE)
#: A pass named by who holds it or where it lets one in, then what for or from where: "speaker pass for TechSparks",
#: "gate pass from reception", "staff pass for the expo" (round secrets50); "my pass for gmail" names a password.
_TICKET_PASS = (r"\b(?!(?:my|the|a|an|your|his|her|our|their|its|wifi|wi-fi|login|account|email|mail|app|bank|this|"
                r"that|admin|user|root|new|old)\b)[a-z]+\s+pass(?:es)?\s+(?:for|to|from|at|into|of|arrives?|came)\b")
_TICKET_PASS_SAID = re.compile(_TICKET_PASS, re.IGNORECASE)
#: Round secrets51: a queue's token with its slot's time ("Token 57 at the RTO, slot 11:15", "token number A-142, slot
#: at 10:30") is a place in a queue, also under a token's key.
_QUEUE_TOKEN_SAID = (r"\b(?:token|ticket|queue)\s+(?:no\.?|number|num|#)?\s*[A-Z]?-?\d{1,4}\b(?=.{0,40}\b(?:slot|"
                     r"appointment|\d{1,2}[:.]\d\d|\d\s*(?:am|pm)))")
_QUEUE_TOKEN = re.compile(_QUEUE_TOKEN_SAID, re.IGNORECASE)
#: Phrases that mention a secret's word without being one; taken out before anything else is read.
_HARMLESS = re.compile(
    r"\b(?:zip|postal|post|area|country|dial(?:l)?ing|booking|reservation|pnr|std|isd|airport|iata|dress|promo|promotional|discount|"
    r"coupon|referral|invite|source|qr|bar|error|status|tax|hs|sic|naics|product|course|colou?r|morse|"
    r"language|currency|time ?zone|talk|session|event|order|tracking|item|sku|class|subject|exam|"
    # a bank branch's code is printed on every cheque: it names the branch, it opens nothing
    r"ifsc|swift|bic|branch|sort|"
    # a tax classification's or a cheque's code is printed on every invoice or cheque (round secrets46)
    r"hsn|sac|micr|tariff|hts|gst|icd|isbn|ean|upc|flight|train|course|stock|ticker|"
    # round secrets48: a record's code names a person or a thing, it opens nothing: "employee code GL-0042"
    r"employee|emp|staff|roll|student|member|customer|client|vendor|supplier|project|department|dept|cost|"
    r"routing|aba|bsb|transit|office|site|batch|course|nature)\s*codes?\b|"
    # round secrets48: logging in with Google and no password of one's own names none: "separate password illa"
    r"\b(?:no|without|bere|separate|alag|vera|veru|koi)\s+(?:separate\s+|alag\s+)?passwords?"
    r"(?:\s+(?:illa|illai|ledu|nahi|nahin|nai|nathi|nako|needed|required|hai|beda|venda))?\b|"
    r"\bpasswords?\s+(?:illa|illai|ledu|nahi|nahin|nai|nathi|nako|beda|venda)\b|"
    r"\bcode\s*(?:reviews?|base|quality|freeze|names?|of conduct|school|camp|editor|owners?)\b|\bcodebase\b|"
    r"\bpass(?:word)?\s*(?:managers?|policy|policies|rotation|resets?|hygiene)\b|\bpasswordless\b|\bpasskeys?\b|"
    r"\b(?:boarding|bus|metro|train|season|day|gym|museum|hall|rail|annual|ski|park|festival|weekly|monthly|"
    r"yearly|press|backstage|guest|visitor|"
    # a pass named by what it lets one ride or enter is a ticket: "travel pass", "Eurail global pass"
    r"travel|transit|eurail|interrail|global|flight|ferry|lounge|parking|student|concession|airport|entry|"
    r"weekend|holiday|tourist|city|hop-on|all-access|vip|event|conference|concert|stadium|pool|club)\s+pass(?:es)?\b|"
    r"\blog ?in (?:preference|method|provider)s?\b|\bsign(?:ing)? in with\b|"
    r"\bpin[ -]?strip(?:e|ed|es)\b|"
    # round secrets47: a pin worn or a post pinned, a pass of an exam, a token given as a gift are no secrets:
    # "pin badge", "Pin the launch tweet to the company profile", "passed the CA final", "token of appreciation"
    r"\b(?:pin|lapel|enamel)\s+badges?\b|\b(?:enamel|lapel|hat|collar)\s+pins?\b|"
    # a pin that is a thing one holds: "pin cushion", "safety pin", "hairpin"
    r"\bpin\s*cushions?\b|\b(?:safety|hair|bobby|drawing|push|sewing|bowling|rolling|tie|brooch)\s*pins?\b|"
    + _PINNED_POST_SAID + r"|"
    r"\bpass(?:ed|es|ing)?\s+(?:the\s+|my\s+|an?\s+|her\s+|his\s+)?(?:[\w'-]+\s+){0,2}?(?:exams?|tests?|finals?|"
    r"interviews?|papers?|boards?|semesters?|levels?|marks|percentage|rate)\b|"
    r"\btokens?\s+of\s+(?:appreciation|thanks|gratitude|love|respect|affection|goodwill|remembrance|esteem)\b|"
    r"\btoken\s+(?:amount|money|advance|payment|gesture|strike|gift)\b|"
    # "pin" as a verb: "pin_to_top: weekly report" (round secrets46)
    r"\bpin(?:ned)?\s+to\s+(?:the\s+)?(?:top|board|channel|chat|dashboard|wall|profile|home ?screen|taskbar)\b|"
    r"\b(?:postal|post|zip|area)\s*pin\b|\bsecret (?:santa|sauce|ingredients?|recipes?)\b|"
    r"\b(?:seed|pre-?seed) (?:rounds?|stage|funds?|funding|investors?|capital|money)\b|\bpre-?seed\b|"
    # a pin dropped on a map marks a place (:data:`_MAP_PIN_SAID`)
    + _MAP_PIN_SAID + r"|"
    # a numbered place in a queue is no key: "token no 37 at the RTO", "token number 12 at the clinic"
    r"\btokens?\s+(?:no|number|num|#)\.?\s*\d{1,4}\b|"
    r"\b(?:crypto|utility|governance) tokens?\b|\btoken (?:sales?|economics|launch)\b|\botp[- ]?(?:less|free)\b|"
    # round secrets50: a pass named by who holds it and what it lets one into is a ticket ("a speaker pass for
    # TechSparks", "a gate pass from reception"); a secret's kind after "per" is the unit of a price
    # ("₹0.18 per OTP SMS"); a network's name is no password ("the Shah_Home_5G network", "SSID CafeMocha_5G")
    + _TICKET_PASS + r"|"
    r"\bper\s+(?:\w+\s+){0,2}?(?:otp|2fa|mfa|sms|verification|password|pin|code|login)s?"
    r"(?:\s+(?:sms|messages?|texts?|requests?|checks?))?\b|"
    r"(?<=\bthe\s)[\w-]+\s+(?:network|wi-?fi|wlan|hotspot)\b|\bssid\s*[:=-]?\s*[\w-]+|"
    r"\bnetwork\s+name\s*[:=-]?\s*[\w-]+|"
    # round secrets51: a booking's reference beside its word (letters and digits, an airline's PNR); a queue's token
    # with its slot's time (:data:`_KIND_ONLY` below: where a secret is kept, a policy naming its kind)
    r"\b(?:pnr|booking\s+(?:ref(?:erence)?|code|number)|reservation\s+(?:code|ref(?:erence)?|number)|"
    r"buchungs(?:code|nummer)|record\s+locator|localizador|c[óo]digo\s+de\s+reserva)\s*[:#]?\s*"
    r"(?=[A-Z0-9]{0,7}[A-Z])[A-Z0-9]{5,8}\b|"
    + _QUEUE_TOKEN_SAID,
    re.IGNORECASE)
#: Round secrets51: where a secret is written or kept ("The Wi-Fi password is printed on the sticker under the router")
#: and a policy naming a secret's kind with an article ("needs a 12-character password", "to have a 6-digit passcode
#: with Face ID") say no secret: taken out only when nothing else in the value has a code's or a credential's shape
#: ("password is kept in the drawer, it is Tiger_88" is still read).
_KIND_ONLY = Lazy(
    r"\b(?:password|passcode|pin|code|combination|combo)s?\s+(?:is|are)\s+(?:\w+\s+)?(?:printed|written|saved|"
    r"stored|kept|taped|stuck|noted|pinned)\s+(?:on|in|under|behind|inside|at|by|with)\b|"
    r"\b(?:a|an|one)\s+(?:\d{1,2}[- ](?:digit|character|char|letter)s?\s+|strong\s+|long\s+|new\s+|unique\s+|"
    r"separate\s+|different\s+)?(?:password|passcode|pin|passphrase)\b", re.IGNORECASE)
_KIND_WORD = re.compile(r"pass|pin|code|comb", re.IGNORECASE)
_N_DIGITS = re.compile(r"\b\d{1,2}[- ](?:digit|character|char|letter)s?\b", re.IGNORECASE)
#: Words that say the thing is about a card, a bank, a phone or a lock (then a six-digit "pin code" is not a postcode).
_SENSITIVE = re.compile(r"\b(?:card|atm|bank|upi|debit|credit|sim|phone|mobile|lock|locker|door|gate|safe|alarm|"
                        r"wallet|account|netbanking|app)\b", re.IGNORECASE)
_POSTAL_PIN = re.compile(r"\bpin ?codes?\b(?:\s*(?:is|:|-))?\s*\d{3} ?\d{3}\b|"
                         # six digits after "PIN" then a place's name ("PIN 400050, Bandra West") is a postcode:
                         # an address is written so, a card's PIN never is (round secrets46)
                         r"\bpin\s*(?:no\.?|number|[:-])?\s*[1-9]\d{2} ?\d{3}\s*,?\s+(?=[A-Z])|"
                         # or closing an address: "3rd floor, Kalyani Nagar, Pune, PIN 411006"
                         r",\s*pin\s*(?:code)?\s*(?:no\.?|[:-])?\s*[1-9]\d{2} ?\d{3}\s*\.?\s*$|"
                         # or said where one lives or ships: "My parents live at PIN 395007"
                         r"\b(?:live|lives|living|stay|stays|located|address|deliver\w*|ship\w*|area|based|moved)\b"
                         r".{0,40}?\bpin\s*(?:code)?\s*(?:no\.?|[:-])?\s*[1-9]\d{2} ?\d{3}\b", re.IGNORECASE)

#: A key that names a secret, whatever its value.
_SECRET_KEY = re.compile(
    r"pass ?words?|passcodes?|pass ?phrases?|passwd|\bpw\b|\bpwd\b|\bpass\b|"
    r"\bcvv2?\b|\bcvc\b|\bcsc\b|\bapi ?keys?\b|\baccess ?keys?\b|"
    r"\b(?:api|access|auth|bearer|bot|refresh|session|github|slack|personal access|oauth)\s*tokens?\b|"
    r"\bprivate ?keys?\b|\bmnemonic\b|\bseed ?(?:phrase|words)\b|\brecovery (?:phrase|words|codes?|keys?)\b|"
    r"\bbackup codes?\b|\bpuk\b|\b[imtu]?pin\b|\biban\b|aadhaa?r (?:number|no|card)|"
    r"^pan (?:number|no|card)$|\bpan (?:number|no)\b|passport (?:number|no|num|id)|travel document|"
    r"social security (?:number|no)|"
    r"account (?:number|no)|\ba/?c (?:number|no)\b|card (?:number|no)|credit card|debit card|"
    r"\b(?:card|cc|credit|debit|visa|amex|mastercard)\b.*\b(?:expiry|exp|expiration|valid)\b|"
    r"net ?banking|voter id|\bepic\b|"
    # a phone's unlock pattern is a password drawn with a finger
    r"\bunlock (?:pattern|gesture)s?\b|\block ?screen (?:pattern|code|pin)\b|"
    r"\b(?:phone|screen|lock|mobile|tablet|ipad|laptop) patterns?\b|"
    r"driving licen[cs]e|^dl$|\bkeypad\b|"
    # the answer to a security question opens the account as a password does
    r"\bsecurity (?:answers?|questions?|q)\b|\bsecret (?:answers?|questions?)\b|maiden name|"
    r"\bmemorable (?:word|answer|place|date)\b|\bein\b|\bitin\b|"
    r"^(?:expiry|exp|expiration|expiry date|exp date|valid thru)$|\bgift ?cards?\b",
    re.IGNORECASE)
#: A code word in a short key: a secret unless :data:`_HARMLESS` took it out first.
_CODE_KEY = re.compile(r"\bcodes?\b|\bpins?\b", re.IGNORECASE)
#: Secret words glued together in a key as written ("wifipassword", "doorcode").
_GLUED_KEY = re.compile(r"pass(?:word|code|phrase)|(?:door|gate|alarm|garage|lock|locker|safe|access|entry|security|"
                        r"verification|atm|upi|sim|card|phone|bank)(?:code|pin)", re.IGNORECASE)
#: An Indian postal PIN code: the key says "pin code", the value is six digits (and names no card or lock).
_POSTAL_KEY = re.compile(r"\bpin ?codes?\b")
#: Every number in a postal PIN code's value is six digits ("400050", "PIN 400050, Bandra West", "doesn't deliver to
#: pincode 110092 yet"); a four-digit "pin code: 4455" is a card's or a phone's.
_POSTAL_VALUE = re.compile(r"^(?:[^\d]*(?<!\d)\d{3} ?\d{3}(?!\d))*[^\d]*$")
_LABEL_WORDS = 5
#: Keys that usually hold the secret itself ("wifi: sunflower") but may head a statement about the thing
#: ("wifi: wants faster wifi in the office"): a secret unless the value is such a sentence (:func:`_sentence`).
_AMBIGUOUS_KEY = re.compile(r"\blog ?ins?\b|\bsign ?in\b|\bsecrets?\b|^codes?$|\botp\b|\b2fa\b|\bmfa\b|two ?factor|"
                            r"one ?time|passport|aadhaa?r|\bssn\b|social security|^pan$|voter id|driving licen[cs]e|"
                            r"\bwi ?fi\b|\bseeds?\b|\btokens?\b|"
                            r"\bcredentials?\b|\bvault\b|\bunlock\b|^recovery$|bank account|"
                            # "screen lock: 0807" is the code, "screen lock: uses face id" how it opens
                            r"\b(?:pattern|screen|phone) ?lock\b",
                            re.IGNORECASE)
#: A door's, a gate's or a room's number is part of an address, not a lock's code ("door number: 1203").
_PLACE_NUMBER = re.compile(r"\b(?:doors?|gates?|rooms?|flats?|house|unit|lockers?)\s+(?:number|no|num|#)$")
#: The same said in a value: "SBI locker number 214, Andheri West branch" (round secrets47).
_PLACE_NUMBER_SAID = re.compile(r"\b(?:doors?|gates?|rooms?|flats?|house|unit|lockers?)\s+(?:number|no|num|#)\.?\s*"
                                r"[:#-]?\s*\d", re.IGNORECASE)
#: A card's or an account's last four digits name it without opening it ("ends in 7712", "Visa ending 4242").
_LAST_FOUR = re.compile(r"^\s*(?:[\w/'-]+\s+){0,3}" + MASKED + r"\s*\)?[.,]?\s*$", re.IGNORECASE)
#: A key's last word that makes it about something else than the secret its first words name ("wifi
#: provider", "otp provider", "sign in method", "passport country", "token budget", "seed amount"): no key
#: rule applies (the value's still do).
#: A key whose last word names an event about a secret, not the secret (round secrets46: "password_change", "otp_issue",
#: "passcode_reset"): over a plain sentence no key rule applies (a value holding a code is still read by the key).
_EVENT_HEAD = {"change", "changes", "changed", "reset", "resets", "update", "updates", "updated", "problem",
               "problems", "complaint", "complaints", "delay", "delays", "reminder", "reminders", "habit", "habits",
               "leak", "leaks", "breach", "breaches", "incident", "incidents", "alert", "alerts", "expired", "lockout",
               "locked", "forgot", "forgotten", "recovery", "enabled", "setup", "migration", "audit", "story",
               "question", "questions", "request", "requests", "error", "errors", "failure", "failures", "sms",
               "blocked", "block", "tries", "attempts", "lost", "stolen", "sharing", "shared"}
#: A key naming a secret's state over a word of state (round secrets46): "tpin_status: activated".
_STATUS_HEAD = {"status", "state"} | _EVENT_HEAD
_STATUS_WORD = re.compile(r"^\s*(?:(?:is|was|now|still|got|been|being)\s+)*(?:activated|active|inactive|done|pending|"
                          r"blocked|unblocked|enabled|disabled|expired|completed?|verified|linked|delinked|sent|received|"
                          r"failed|ok|okay|set|generated|issued|changed|reset|updated|locked|unlocked|"
                          # or when: "password_change: yesterday", "pin_reset: every 90 days"
                          r"yesterday|today|tomorrow|(?:last|this|next)\s+\w+|monthly|weekly|quarterly|yearly|daily|"
                          r"every\s+\w+(?:\s+\w+)?|(?:on|in)\s+\w+)\s*[.!]?\s*$",
                          re.IGNORECASE)
_HARMLESS_HEAD = {"takeaways", "lessons", "learnings", "retro", "postmortem",  # round secrets51
                  # round secrets52: "wifi_network: Loon_5G" names a network, "keypad_order: Order no. 3..." a purchase
                  "network", "networks", "ssid", "ssids", "order", "orders", "purchase", "purchases",
                  "bank", "banks", "provider", "providers", "method", "methods", "country", "budget", "budgets",
                  "amount", "amounts", "rent", "rents", "charge", "charges", "emi", "fee", "fees", "cost", "costs",
                  "price", "prices", "size", "limit", "limits", "vendor",
                  "vendors", "type", "types", "policy",
                  # the thing that handles the secret, not the secret: "2fa app", "login page", "otp flow"
                  "app", "apps", "gateway", "gateways", "tool", "tools", "service", "services", "page", "pages",
                  "screen", "screens", "flow", "flows", "team", "teams", "sdk", "library", "platform", "feature",
                  "features", "ui", "ux", "process", "issue", "issues", "bug", "bugs", "experience",
                  # what else a key's last word names: a style, an offer, a time, a room, a plan...
                  "style", "styles", "editor", "editors", "offer", "offers", "deal", "deals", "meal", "menu", "time",
                  "times", "schedule", "hours", "room", "rooms", "system", "systems", "brand", "brands", "model",
                  "models", "company", "supplier", "suppliers", "installer", "level", "levels", "rule", "rules",
                  "plan", "plans", "strategy", "training", "rotation", "review", "reviews", "language",
                  "languages", "stack", "course", "courses", "name", "names",
                  # where a secret is kept or how long it must be, not the secret: "seed phrase location"
                  "location", "locations", "place", "length", "strength", "complexity", "requirements",
                  # a tool that measures or makes one, not one: "password_meter", "password generator"
                  "meter", "meters", "checker", "generator", "generators", "field", "fields",
                  # a thing named after the word, not the secret: "pin board", "code camp"
                  "board", "boards",
                  # how well it works: "wifi speed: 100 mbps"
                  # the device that holds or asks for the secret, not the secret: "wifi router: TP-Link Archer C6"
                  "router", "routers", "modem", "modems", "hardware",
                  "speed", "speeds", "bandwidth", "signal", "coverage", "range", "uptime", "latency",
                  # round secrets48: where one logs in, or an errand about a document, not the secret:
                  # "netbanking_portal", "passport_renewal", "ssn_form", "cpf_contribution"
                  "portal", "portals", "website", "site", "url", "renewal", "renewals", "appointment",
                  "appointments", "form", "forms", "photocopy", "copy", "contribution", "contributions",
                  # round secrets50: who holds a secret, not the secret: "private_key_custody", "signing key holders"
                  "custody", "custodian", "custodians", "holder", "holders"}
#: A key's last word that says the value is a date (``passport expiry: 2031``): over a date alone (a year, a
#: month and a year, a full date) a document's or a scheme's key is no secret; a card's MM/YY still is.
_DATE_HEADS = {"expiry", "expires", "expiration", "renewal", "validity", "issued", "issue", "date", "due"}
_DATE_ONLY = re.compile(r"^\s*(?:(?:[A-Za-z]{3,9}\.?\s+)?(?:\d{1,2}\s+)?(?:19|20)\d\d"
                        r"|\d{1,2}[/.-]\d{1,2}[/.-](?:19|20)\d\d|(?:19|20)\d\d-\d\d(?:-\d\d)?)\s*$")
#: How long something lasts: "1 hour, refresh tokens 30 days", "90 days".
_DURATION = re.compile(r"^\s*\d+\s*(?:s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|weeks?|months?|"
                       r"years?|yrs?)\b[^\d]*(?:\d+\s*(?:s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|"
                       r"weeks?|months?|years?|yrs?)\b\W*)*$", re.IGNORECASE)
#: A key about a card (its MM/YY expiry is a secret's part).
_CARD_KEY = re.compile(r"\b(?:card|cc|credit|debit|visa|amex|mastercard|rupay)\b", re.IGNORECASE)
#: A key naming a security question or its answer.
_SECURITY_KEY = re.compile(r"\bsecurity (?:answers?|questions?|q)\b|\bsecret (?:answers?|questions?)\b|"
                           r"\bmaiden name\b|\bmemorable (?:word|answer|place|date|name)\b|"
                           # round secrets46: a key that says its value is an answer given to prove who one is:
                           # "school_name_for_verification", "father_birthplace_answer", "recovery question",
                           # "verification answer" (whatever the value is: a pet's name, a school, a city)
                           r"\b(?:for|as) (?:the )?(?:verification|security|recovery|identity check)\b|"
                           r"\b(?:verification|recovery|challenge|hint|identity|kba) "
                           r"(?:answers?|questions?|q|words?)\b")
#: Round secrets46: backup, recovery, authenticator or 2FA codes are secrets in any words ("backup numbers 4471-2290",
#: "scratch codes", "2FA recovery: 5821 9902"): such a word with a code word, or under a key naming one, beside a code
#: of digits or letters and digits. Naming them with no code given ("printed the backup codes") is kept. A key's word
#: counts only with a code's word as its last ("login_backup_codes") or as its last itself ("authenticator_backup"):
#: "backup_plan", "emergency_fund" are no codes; "emergency numbers" (112) are no codes either.
_BACKUP_WORD = re.compile(r"\b(?:backup|back-up|recovery|authenticator|authy|2fa|mfa|two[- ]factor|totp|scratch|"
                          r"emergency|one[- ]time|otp|escape|fallback|verification|login)\b", re.IGNORECASE)
_BACKUP_HEADS = {"backup", "backups", "recovery", "authenticator", "authy", "2fa", "mfa", "totp", "scratch"}
_CODE_HEADS = {"code", "codes", "number", "numbers", "key", "keys", "pin", "pins", "digits", "token", "tokens", "words"}
_BACKUP_CODES = re.compile(r"\b(?:(?:backup|back-up|recovery|authenticator|2fa|mfa|two[- ]factor|totp|scratch|"
                           r"emergency|one[- ]time|escape|fallback)\s+(?:\w+\s+)?(?:codes?|keys?|pins?|tokens?|words?)|"
                           r"(?:backup|back-up|recovery|authenticator|2fa|mfa|totp|scratch)\s+(?:\w+\s+)?"
                           r"(?:numbers?|digits))\b", re.IGNORECASE)
#: A number with a unit is a quantity, not a code: "500 GB", "3000 mAh", "100 days".
_QUANTITY = re.compile(r"\b\d[\d,.]*\s*(?:gb|tb|mb|kb|kva|kw|mah|w|hours?|hrs?|days?|weeks?|months?|years?|mins?|"
                       r"minutes?|seconds?|ms|%|copies|files|photos|users|accounts)\b", re.IGNORECASE)
_CODE_OR_WORD = re.compile(r"(?<![\w.,])\d{3,}(?:[ -]\d{3,})*(?![\w.,]*\d)|"
                           r"\b(?=[\w-]{6,})(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b")
#: A phone or a reader's contact number is no code: under such a key the digits are a number to call.
_CONTACT = re.compile(r"\b(?:phone|mobile|cell|email|e-mail|contact|whatsapp|number to call|landline|fax)\b",
                      re.IGNORECASE)
#: Round secrets46: an unlock pattern in any form is a password drawn: digits on a grid ("1-5-9-6-3 on the 3x3 grid"),
#: a shape drawn or swiped to get into a device ("draws a Z starting top-left to get into the phone", "swipe L to
#: unlock"), a knock code. Swiping left on an app or drawing on a whiteboard opens nothing.
_GRID_DIGITS = re.compile(r"(?<![\w.])[1-9](?:\s*(?:-|\u2013|>|→|,|\s)\s*[1-9]){3,8}(?![\w.])")
_GRID_WORD = re.compile(r"\b(?:grid|dots?|pattern|knock\s+code|unlock|3\s*x\s*3|nine[- ]dot|9[- ]dot)\b",
                        re.IGNORECASE)
_DRAWN = re.compile(r"\b(?:draws?|drew|drawn|drawing|swipes?|swiped|swiping|traces?|traced|tracing|makes?\s+an?)\s+"
                    r"(?:an?\s+|the\s+|my\s+)?(?:[A-Z]\b|[A-Z]-shape|\w+[- ]shape[d]?|zig-?zag|letter\s+\w|"
                    r"(?:square|triangle|star|circle|cross|hook|line|diagonal|tick|check\s*mark|z|l|m|n|u|s|c|w|v)\b)",
                    re.IGNORECASE)
#: A letter or a shape placed on the dots ("a big W across all nine dots", "an S-shape, top right first").
_SHAPE_PLACED = re.compile(r"\b(?:[A-Z](?:[- ]shaped?)?|(?i:[a-z]+[- ]shaped?|zig-?zag))\b"
                           r"(?=(?i:.{0,40}\b(?:across|from|"
                           r"starting|start|top|bottom|dots|grid|corner)\b))")
_INTO_DEVICE = re.compile(r"\b(?:unlock\w*|get\s+(?:into|in)|open\w*|log\w*\s+in(?:to)?|into)\b.{0,30}?\b(?:phone|"
                          r"mobile|tablet|ipad|screen|device|laptop|handset)\b|\bto\s+unlock\b|\bunlock\s+(?:pattern|"
                          r"gesture|shape)\b|\b(?:lock\s*screen|screen\s*lock|pattern\s*lock|phone|tablet|ipad)\b",
                          re.IGNORECASE)


def _backup_codes(key: str, value: str) -> bool:
    """Backup / recovery / 2FA codes given in any words (see :data:`_BACKUP_WORD`)."""
    words = _words(key)
    if _CONTACT.search(words) or _CONTACT.search(value):
        return False
    head = _head(words)
    named = bool(_BACKUP_CODES.search(value)) or head in _BACKUP_HEADS or (
        bool(_BACKUP_WORD.search(words)) and head in _CODE_HEADS)
    return named and bool(_CODE_OR_WORD.search(_QUANTITY.sub(" · ", _harmless_out(value))))


def _unlock_drawn(key: str, value: str) -> bool:
    """An unlock pattern in any form (see :data:`_GRID_DIGITS`)."""
    both = f"{_words(key)} · {value}"
    if _GRID_DIGITS.search(value) and _GRID_WORD.search(both):
        return True
    if _SHAPE_PLACED.search(value) and (re.search(r"\b(?:dots|grid)\b", value, re.IGNORECASE) or
                                        _INTO_DEVICE.search(both)):
        return True
    return bool(_DRAWN.search(value)) and bool(_INTO_DEVICE.search(both)) and \
        not re.search(r"\bswip\w*\s+(?:left|right|up|down)\s+on\b", value, re.IGNORECASE)


#: Where a secret is kept is no secret (round secrets46): "2fa_recovery_codes: saved in 1Password", "printed, in the
#: blue diary" (a code given beside it is still read: :data:`_CODE_OR_WORD`).
_KEPT_WHERE = re.compile(r"^\s*(?:(?:are|is)\s+)?(?:saved|stored|kept|written(?:\s+down)?|printed|locked(?:\s+up)?|"
                         r"filed|noted)(?:\s+(?:and|,)\s+\w+)?\s+(?:in|on|at|inside|under)\b", re.IGNORECASE)
#: A key whose last word is "answer" ("father_birthplace_answer"): the answer to a question asked to prove who one is,
#: unless its value is a plain sentence ("interview_answer: talked about scaling the team").
_ANSWER_HEAD = {"answer", "answers"}
#: Round secrets46: a value that mentions a security, verification or challenge question (its answer, a memorable
#: word or place, what one says "for verification") tells the answer, whatever the answer is ("Linking Road — that's
#: what I put for the SBI challenge question", "My memorable place for Barclays is Shimla"), unless it only tells an
#: event about them with no name in it (:data:`_ANSWER_EVENT`: "update the HDFC verification questions").
_SECURITY_MENTION = re.compile(
    r"\b(?:security|verification|challenge|memorable|secret|recovery|hint|identity)\s+(?:questions?|answers?|words?|"
    r"places?|q|names?|dates?)\b|\b(?:for|as|in)\s+(?:the\s+|my\s+|a\s+|an\s+)?(?:[\w'\u2019]+\s+){0,2}verification\b",
    re.IGNORECASE)
#: A name in a value: a capitalised word that is not its first word ("I" and acronyms such as HDFC are none).
_A_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")


#: Round secrets46: a fact offered for when a bank or a service asks is the answer it will check: "If the bank asks,
#: my first teacher was Mrs Pinto" (with a name in it).
_WHEN_ASKED = re.compile(r"\b(?i:if|when|whenever|in\s+case)\s+(?i:the\s+|my\s+)?(?:\w+\s+)?"
                         r"(?:(?i:bank|app|support|call\s+cent(?:re|er)|customer\s+care|helpline|branch)|[A-Z]{3,})\s+"
                         r"(?i:asks?|calls?|checks?|verifies)(?:\s+(?i:to\s+verify|for\s+verification))?\s*[,:]"
                         r"(?=.*\b(?i:my|our)\s+(?:\w+\s+){0,3}(?i:is|was|are)\b)")


#: Round secrets49: an opinion of security questions gives no answer, whatever bank it names ("Annoyed that Barclays
#: still asks a memorable word", "Says security questions are useless since ...").
_OPINION = re.compile(r"^\s*(?:(?:doesn'?t|does\s+not|don'?t|never)\s+)?(?:likes?|dislikes?|hates?|annoyed|says|thinks|"
                      r"prefers?|wants|wishes|finds|complains?|believes|argues|feels)\b|"
                      r"\b(?:useless|pointless|outdated|insecure|still\s+(?:use|uses|ask|asks)|annoys|annoying|irritat\w*|"
                      r"bugs\s+me|drives\s+me|i\s+(?:hate|dislike|don'?t\s+like))\b", re.IGNORECASE)


def _security_told(text: str) -> bool:
    """Whether ``text`` tells the answer to a security question (:data:`_SECURITY_ANSWER`, :data:`_SECURITY_MENTION`),
    not only an event about one with no name in it."""
    asked = _WHEN_ASKED.search(text)
    if asked and _A_NAME.search(text[asked.end():]):
        return True
    if not (_SECURITY_ANSWER.search(text) or _SECURITY_MENTION.search(text)):
        return False
    if _OPINION.search(text) and ":" not in text and not given_answer(text):
        return False  # round secrets49: "Doesn't like banks that still use security questions"
    return not (_ANSWER_EVENT.search(text) and _sentence(text) and not _A_NAME.search(text.strip()))


#: An event about a security question, with no answer given: "I forgot the answer to my security question".
_ANSWER_EVENT = re.compile(r"\b(?:forgot|forget|forgotten|forgetting|reset|resetting|changed?|changing|updated?|"
                           r"updating|lost|set\s+up|setting\s+up|asked|asks|asking|locked\s+out|pick|picked|picking|chose|choose|"
                           r"choosing|new|"
                           # or an opinion of them: "the security questions at my bank are silly"
                           r"answered|answering|silly|annoying|stupid|hard|easy|confusing|hate|too\s+many)\b",
                           re.IGNORECASE)
#: A key naming a handle (``discord_username: neonpanda#4421``): one word under it is the name people see,
#: not a password, whatever its shape (a password's own key or words still say so).
_HANDLE_HEADS = {"username", "usernames", "handle", "handles", "user", "userid", "gamertag", "tag", "id", "nick",
                 "nickname", "email", "mail"}
#: The answer to a security question said in words ("answer to my security question ... is St. Xavier's",
#: "mother's maiden name was Fernandes"): it opens the account as a password does.
_SECURITY_ANSWER = re.compile(r"\b(?:security|secret)\s+(?:questions?|answers?|q)\b.{0,60}?(?:\bis|\bwas|:|=)\s*\S|"
                              r"\bmaiden\s+name\b\s*(?:is|was|:|=|-)\s*\S|"
                              r"\bmemorable\s+(?:word|answer)\b\s*(?:is|was|:|=|-)\s*\S|"
                              # round secrets46: a value that says it is the answer to a security or verification
                              # question, or is used for one: "Tommy — the answer to the bank's verification
                              # question", "Kanpur — the answer I gave HDFC for verification", "X (security question)"
                              r"\banswers?\b(?:\W+\w+){0,8}?\W+(?:verification|security|secret|challenge|recovery|"
                              r"memorable)\b|"
                              r"\b(?:verification|security|secret|challenge|recovery)\s+(?:questions?|q)\b(?:\W+\w+){0,4}?"
                              r"\W+answers?\b|"
                              r"\S\s*(?:[(\[]|[\u2014\u2013-]\s|:\s)\s*(?:for\s+|as\s+|used\s+(?:for|as)\s+)?(?:the\s+|my\s+|a\s+)?"
                              r"(?:\w+['\u2019]s\s+|\w+\s+)?(?:security|verification|secret|challenge|recovery)\s+"
                              r"(?:questions?|q|answers?|check)\b|"
                              r"\b(?:security|secret|verification|memorable)\s+(?:answers?|words?)\s+(?:(?:changed|"
                              r"set|reset|updated|switched)\s+)?to\s+[A-Z0-9]|"
                              # "the answer to 'city you were born in' on my Paytm account is Indore"
                              r"\banswers?\s+(?:to|for)\b.{0,60}?\b(?:account|bank|login|app|card|netbanking|wallet|"
                              r"portal|site|website)\b.{0,30}?\b(?:is|was|:)\s*\S|"
                              r"\bfor\s+(?:the\s+|a\s+)?(?:verification|security\s+(?:questions?|checks?))\b\s*"
                              r"(?:is|was|:|=|[\u2014\u2013-])\s*\S|"
                              r"\b(?:uses?|used|gave|give|set|put)\s+(?:it|this|that)\s+(?:as|for)\s+(?:the\s+|my\s+|a\s+)?"
                              r"(?:\w+['\u2019]s\s+)?(?:\w+\s+)?(?:verification|security|secret|recovery)\b",
                              re.IGNORECASE)
#: A key over a plain sentence about its thing ("wants faster wifi") but a secret over a code, a phrase...
#: (:data:`_AMBIGUOUS_KEY`); a key naming a card's expiry over a date shaped MM/YY.
_EXPIRY_KEY = re.compile(r"\b(?:expiry|exp|expiration|expires|valid)\b", re.IGNORECASE)
_CARD_DATE = re.compile(r"\b\d{1,2}\s*/\s*(?:\d{2}|20\d{2})\b")
#: A key naming an admin or a login over exactly "user password" ("router admin: admin admin123").
_ADMIN_KEY = re.compile(r"\b(?:admin|root|router|login|account|ssh|server)\b", re.IGNORECASE)
#: "admin / admin", "root:toor": a login and its password under an admin's key, whatever their shape.
_SLASH_PAIR = re.compile(r"^\s*[\w.@-]{2,}\s*[/:]\s*(?!\d+\s*$)\S{3,}\s*$")  # not a host:port
_USER_AND_PASSWORD = re.compile(r"^\s*[\w.@-]{2,}\s+(?=\S*[A-Za-z])(?=\S*[\d\W])\S{4,}\s*$")
_FUNCTION_WORD = re.compile(r"\b(?:a|an|the|in|of|to|for|with|at|on|is|are|and|by|from|my|our|their|it|over|about|"
                            r"via|as|than|into|under|that|when|after|before|because|yet|"
                            # auxiliaries and pointing words make a clause too: "Amazon OTP came late again today"
                            r"was|were|has|have|had|got|gets|again|this|these|those)\b",
                            re.IGNORECASE)
#: A key naming a lock: a code of digits under it is the lock's code ("home alarm: disarm with 5570").
_LOCK_KEY = re.compile(r"\b(?:doors?|gates?|alarms?|garages?|safes?|lockers?|lockbox|locks?|padlock|vault|keypad|"
                       r"key ?safe|combinations?|combos?|atm|entry|access|buzzer|intercom)\b", re.IGNORECASE)
_DIGIT_CODE = re.compile(r"(?<![\w.,])[#*]?\d(?:[ #*-]?\d){2,7}#?(?![\w.,]*\d)")

#: A password word in a value, and what follows it: after a mark or "is" (``pw: X``, "password is X") that is
#: the password unless it says how the password is (:data:`_STATE`); right after the word (``pw X``) it is when it
#: has a password's shape (a digit, a symbol, a capital inside), ends the value, or the value is no sentence.
_PASSWORD_WORD = re.compile(
    r"\b(?P<w>password|passwd|passcode|passphrase|pwd|pw|pass|secret|key)(?P<plural>s)?\b"
    r"(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+)?[\w.@-]+)?"
    r"\s*(?P<mark>(?:is|was|are|=|:|-)\s*)?(?P<tok>[^\s,;]+)(?P<end>\s*[.!]?\s*$)?", re.IGNORECASE)
#: Words after "password is" that say how the password is, not what it is ("is too weak", "is stored in...").
_STATE = {"not", "no", "never", "too", "very", "so", "weak", "strong", "long", "short", "expired", "expiring",
          "reset", "changed", "required", "mandatory", "stored", "saved", "kept", "managed", "hashed", "encrypted",
          "written", "in", "on", "at", "with", "by", "shared", "different", "easy", "hard", "simple", "complex",
          "set", "sent", "needed", "missing", "lost", "forgotten", "wrong", "invalid", "rotated", "case", "only",
          "also", "still", "now", "being", "getting", "protected", "enforced", "optional", "disabled", "enabled"}
_NOT_A_PASSWORD = {"is", "was", "the", "a", "an", "and", "or", "to", "for", "of", "on", "in", "at", "with", "by",
                   "from", "it", "that", "this", "not", "no", "manager", "change", "changes", "changed", "reset",
                   # a word that says when is no password: "changed my gmail password today"
                   "today", "yesterday", "tomorrow", "again", "recently", "already", "twice", "lately", "earlier",
                   "tonight", "now", "later", "once", "often", "daily", "weekly", "monthly", "yearly"}
#: Verbs that give a code its value as "is" does: "the door code changed to 6621", "pin is now 4455", "reset to".
_GIVES = (r"\b(?:(?:changed|changes|change|set|reset|updated|switched|moved)\s+(?:it\s+)?to|(?:is|was)\s+now|now"
          r"|became|becomes|(?:will|would)\s+be|is\s+still|remains)")
#: A code told before its name: "4455 is my card pin", "1970 - that's the gate code".
_CODE_BEFORE_NAME = re.compile(
    r"(?<![\w.,])[#*]?\d(?:[ #*-]?\d){2,7}#?\s*(?:is|was|=|-|,)?\s*(?:that['\u2019]?s\s+|is\s+)?"
    r"(?:the|my|our|his|her|their)\s+"
    r"(?:[\w'-]+\s+){0,3}(?:pins?|passcodes?|passwords?|codes?|combos?|combinations?)\b", re.IGNORECASE)
#: A code word (or a lock) in a value, followed by a code.
_CODE_TOKEN = (r"(?P<tok>[#*]?\d(?:[ #*.-]?\d){2,}#?|(?=[\w-]{4,})(?=[\w-]*\d)(?=[\w-]*[A-Za-z])"
               r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)")
_CODE_WORD = re.compile(
    r"\b(?:pins?|[imtu]pins?|codes?|combos?|combinations?|keypad|otp|cvv2?|cvc|puk|atm)\b"
    r"(?:(?:\s+[\w.&'-]+){0,5}?\s*(?:is|was|are|hai|tha|:|=|-|,|" + _GIVES + r")|\s+(?:opens|unlocks)\s+with"
    # Hindi puts the owner's word after the name and "hai" after the code: "ATM pin mera 5566 hai"
    r"|(?:\s+(?:mera|meri|mere|hamara|hamari|apna|apni|ka|ki|ke|wala|wali|toh|to))+"
    r"|\s*[:=#-]?)\s*" + _CODE_TOKEN + "|"
    # a lock's name only with a mark or "opens with" before the code: "gate 122" is a gate's number
    r"\b(?:door|gate|alarm|garage|safe|locker|lock|lockbox|vault)\b(?:\s*[:=#-]|\s+(?:opens|unlocks)\s+with)\s*"
    + _CODE_TOKEN.replace("?P<tok>", "?P<tok2>"), re.IGNORECASE)
#: Digits keyed in: "buzz 4417 at the front door", "disarm with 5570".
_KEYED_IN = re.compile(r"\b(?:buzz|press|punch(?:\s+in)?|key\s+in|enter|disarm|arm)\s+(?:with\s+|in\s+)?"
                       r"[#*]?\d(?:[ #*-]?\d){3,7}#?(?![\w.,]*\d)", re.IGNORECASE)
#: A combination lock's dial: two or more "left 12", "right 7", "12 right" turns.
_DIAL_TURN = re.compile(r"\b(?:left|right|clockwise|anti-?clockwise|counter-?clockwise)\s+(?:to\s+)?\d{1,2}\b|"
                        r"\b(?:l|r|cw|ccw)\s\d{1,2}\b|"  # "L 24, R 11, L 37" ("L2 and L3 support" is no dial)
                        r"\b\d{1,2}\s+(?:left|right)\b|"
                        # round secrets47: a dial's turns in Hindi, Marathi, Tamil, Kannada: "pehle 23 daayein, phir
                        # 11 baayein", "valathu 12", "edakke 7"
                        r"\b\d{1,2}\s+(?:daa?yei?n?|baa?yei?n?|daa?ye|baa?ye|ujav\w*|dav\w*|valath\w*|idath\w*|"
                        r"bala\w*|eda\w*)\b|\b(?:daa?yei?n?|baa?yei?n?|ujav\w*|dav\w*|valath\w*|idath\w*)\s+"
                        r"(?:taraf\s+)?\d{1,2}\b", re.IGNORECASE)
#: A login and its password: "ig login rohan_88 with Sunset#99", "ssh root@10.0.0.4 with hunter2", "user
#: rohan88, secret Tiger@2024"; or a handle with digits (or an e-mail address) then a comma and a phrase
#: with a digit ("rohan88, tulip garden 42").
_LOGIN_PAIR = re.compile(
    r"\b(?:login|log in|user(?:name)?|user id|ssh|handle)\s+[\w.@-]{3,}\s*(?:,|/|\bwith\b|\band\b)\s*"
    r"(?:(?:pw|pwd|password|pass|secret)\s*[:=]?\s*)?(?=\S*[A-Za-z])(?=\S*(?:\d|[^\w\s](?=\S)))\S{4,}|"
    r"^\s*(?:[A-Za-z][\w.]*\d[\w.]*|[\w.+-]+@[\w-]+\.[\w.]+)\s*,\s*(?=[^,]*[A-Za-z])(?=[^,]*\d)[^,]{3,}$",
    re.IGNORECASE)
#: Whatever opens or unlocks with a code of digits tells that code: "unlocks with 120588", "opens with 2468".
_OPENS_WITH = re.compile(r"\b(?:opens?|opened|unlocks?|unlocked|disarms?|disarmed|unlocking|opening)\s+"
                         r"(?:with|using|by|on)\s+(?:the\s+code\s+|entering\s+|typing\s+|pressing\s+)?"
                         r"[#*]?\d(?:[ #*-]?\d){2,7}#?(?![\w.,]*\d)", re.IGNORECASE)
#: Digits used to open something: "use 3344 to open the garage", "enter 2580 to get in".
_USED_TO_OPEN = re.compile(r"\b(?:use|enter|dial|type|press|punch|key)\s+[#*]?\d(?:[ #*-]?\d){2,7}#?\s+(?:to|for)\s+"
                           r"(?:open|unlock|get\s+in|enter|disarm|access|arm)", re.IGNORECASE)
#: A lock's name said to "be" a code of four or more digits: "alarm is 5577" ("gate 4" is a gate's number).
_LOCK_IS = re.compile(r"\b(?:door|gate|alarm|garage|safe|locker|lock|lockbox|vault|padlock|keypad|entry|buzzer|"
                      r"intercom)\s+(?:is|was)\s+[#*]?\d(?:[ #*-]?\d){3,7}#?(?![\w.,]*\d)", re.IGNORECASE)
#: Digits with a keypad's ``#`` after them or ``*`` before them are keyed in: "entry 2211#", "*2468#" ("#12" alone
#: is a number's sign).
_KEYPAD_DIGITS = re.compile(r"(?<![\w#])\d{3,8}#|(?<![\w*])\*\d{3,8}\b")
#: A device that exists only to be opened by a code (a lockbox, a key safe, a padlock, a keypad): any code of
#: digits in the same value is its code ("lockbox by the meter, 1948"). A door or a gate is a place too
#: ("gate 122"), so it is not one of them.
_CODE_DEVICE = re.compile(r"\b(?:lock ?box(?:es)?|key ?safes?|padlocks?|keypads?|key ?boxe?s?|combination locks?|"
                          r"combo locks?|safe deposit|digital safe|cash box|alarm panel|door panel)\b", re.IGNORECASE)
#: A gift card's code: groups of four capitals and digits ("AQ7X-9PLM-22RT").
_GIFT_CODE = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{4}(?:-[A-Z0-9]{4}){2,}\b")
#: A login and its password after a "u/p" or "user/pass" label: "u/p priya.accounts / Ledger2023".
_USER_PASS = re.compile(r"\b(?:u\s*/\s*p|user(?:name)?\s*/\s*pass(?:word)?|login\s*/\s*pass(?:word)?|"
                        r"id\s*/\s*pass(?:word)?)\b\s*[:=-]?\s*\S{2,}\s*(?:/|,|\s)\s*\S{3,}", re.IGNORECASE)
#: ``user / Pa55word!``: a login and a password-shaped word (letters, digits and a symbol).
_CREDENTIAL_PAIR = re.compile(
    r"\b[\w.@-]{3,}\s*/\s*(?=[^\s/]*[A-Za-z])(?=[^\s/]*\d)(?=[^\s/]*[^\w\s/])[^\s/]{6,}")
#: A value that mentions a secret's kind outright: a secret unless the value only names the kind in a plain
#: sentence ("Twilio for OTP delivery", "I forgot my password yesterday"; see :func:`_names_only`).
_SECRET_WORDS = re.compile(
    r"\b(?:password|passcode|passphrase|pwd|mpin|api key|secret key|private key|otp|cvv|cvc|security (?:number|code)|"
    r"recovery (?:phrase|code|codes|words)|seed (?:phrase|words)|backup codes?|"
    r"(?:unlock|phone|screen|lock|mobile|tablet) pattern|"
    # "the pattern on my phone is ...": a phone's pattern named the other way round (round secrets46)
    r"pattern\s+(?:on|of|for|to\s+unlock)\s+(?:my\s+|the\s+|his\s+|her\s+|our\s+)?(?:\w+['\u2019]s\s+)?(?:phone|mobile|"
    r"tablet|ipad|screen|lock\s*screen))\b|"
    r"\bexp(?:iry|ires)?\s*:?\s*\d{1,2}/\d{2}\b",
    re.IGNORECASE)
#: A secret's kind followed by "is" or "are" introduces the secret ("my seed phrase is oak river ...").
_INTRODUCED = re.compile(r"(?:" + _SECRET_WORDS.pattern + r")\s+(?:is|are|was|were)\s+(?P<tok>[\w'-]+)",
                         re.IGNORECASE)

#: keys under which a long digit run is a bank account number
_BANK_KEY = re.compile(r"\b(bank|account|a/c|ifsc|savings|current|sbi|hdfc|icici|axis|kotak|upi)\b", re.IGNORECASE)
_ACCOUNT_DIGITS = re.compile(r"\d{8,}")
_DIGIT_RUN = re.compile(r"(?:\d[ -]?){12,18}\d")
_IBAN = re.compile(r"\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30})\b")
_IDS = (
    ("an Aadhaar-like number", re.compile(r"\b\d{4}[ -]?\d{4}[ -]?\d{4}\b")),
    ("a PAN-like id", re.compile(r"\b[A-Z]{5}\d{4}[A-Z]\b", re.IGNORECASE)),
    ("an SSN-like number", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    ("a passport-like number", re.compile(r"\b[A-Z]\d{7}\b")),
    ("a voter-id-like number", re.compile(r"\b[A-Z]{3}\d{7}\b")),
    ("a driving-licence-like number", re.compile(r"\b[A-Z]{2}[ -]?\d{2}[ -]?\d{4}[ -]?\d{7}\b")),
)
_TOKENS = re.compile(
    r"\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_\w{20,}|\bAKIA[0-9A-Z]{16}\b|"
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{30,}|\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}|"
    r"\bbearer\s+[\w.~+/-]{16,}|-----BEGIN [A-Z ]*PRIVATE KEY|"
    r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)  # the last: a URL with a password in it
_RANDOM = re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b")
#: a key in base64 style (an AWS secret key): 20+ characters of letters, digits and / + =, mixed case
_BASE64ISH = re.compile(r"(?=[A-Za-z0-9/+=]*[a-z])(?=[A-Za-z0-9/+=]*[A-Z])(?=[A-Za-z0-9/+=]*[\d/+=])"
                        r"[A-Za-z0-9/+=]{20,}")

#: A seed phrase: this many plain lowercase words in a row (BIP-39 phrases are 12 to 24 words of 3-8 letters).
SEED_WORDS = 12
_SEED_WORD = re.compile(r"^[a-z]{3,8}$")
#: Common English words that are not BIP-39 words: a run holding more than one is a sentence, not a seed.
_NOT_SEED = {"the", "and", "for", "from", "was", "were", "has", "had", "his", "our", "its", "but", "not", "are",
             "with", "she", "him", "who", "been", "into", "per", "via", "etc"}


def _words(text: str) -> str:
    """``text`` as lowercase words: camelCase split, ``_ - . / = :`` and the like turned into spaces."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return " ".join(re.sub(r"[_\-.=:/\\|]+", " ", text).split()).lower()


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _iban_ok(candidate: str) -> bool:
    """Whether ``candidate`` (or its start: a match may run into the next word) is an IBAN (mod 97)."""
    code = candidate.replace(" ", "")
    for end in range(min(len(code), 34), 14, -1):
        moved = code[4:end] + code[:4]
        if int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1:
            return True
    return False


#: An amount of money said in words: "the locker fee went up to 3500 a year", "rent is 12000 per month", "Rs 3500":
#: a price, not a code (a code is never "a year" or "rupees").
_AMOUNT_SAID = re.compile(
    # an account or a deposit is opened with money: "the new Zerodha account opened with 25000" (round secrets47)
    r"\b(?:account|a/c|fd|fixed\s+deposit|rd|sip|ppf|demat|deposit|policy|wallet)\b.{0,30}?\bopen(?:ed|s)?\s+with\s+"
    r"(?:rs\.?\s*|inr\s*|₹\s*)?\d[\d,]*(?:\.\d+)?|"
    r"\b(?:fees?|rent|price|prices|cost|costs|charges?|charged|paid|pay|pays|paying|salary|emi|bill|deposit\s+of|"
    r"fine|premium|subscription)\b(?:\s+(?!(?:code|pin|combo)\b)[a-z]+){0,4}\s+(?:rs\.?\s*|inr\s*|[$₹€£]\s*)?"
    r"\d[\d,]*(?:\.\d+)?(?:\s*(?:k|rs|rupees|inr|dollars|euros|pounds|/-))?\b|"
    r"(?:\b(?:rs|inr|usd|eur|gbp)\.?\s*|[$₹€£]\s*)\d[\d,]*(?:\.\d+)?|"
    r"\b\d[\d,]*(?:\.\d+)?\s*(?:rs|rupees|inr|dollars|euros|pounds|bucks|/-|(?:a|per|every)\s+(?:year|month|week|day|"
    r"night|hour|annum))\b", re.IGNORECASE)


def _harmless_out(text: str) -> str:
    """``text`` without the phrases that only look like secrets (a six-digit PIN code too, unless a card,
    a bank, a phone or a lock is mentioned)."""
    text = _AMOUNT_SAID.sub(" · ", _HARMLESS.sub(" · ", text))
    kinds = list(_KIND_ONLY.finditer(text)) if _KIND_WORD.search(text) else []
    if kinds:
        rest = _QUANTITY.sub(" ", _N_DIGITS.sub(" ", _KIND_ONLY.sub(" · ", text)))
        # a mark after the kind gives it ("a new password: monsoon"); one before it is a label ("Our rule: ...")
        if not re.search(r"[:=]\s*\S", text[kinds[-1].end():]) and not re.search(r"\d\d", rest) and \
                not any(strong_token(t.strip(".,;:!?'\"()")) for t in rest.split()):
            text = _KIND_ONLY.sub(" · ", text)
    if not _SENSITIVE.search(text):
        text = _POSTAL_PIN.sub(" · ", text)
    return text


#: An e-mail address alone: under a login's key it is the name one logs in with, an address, not its password.
_EMAIL_ONLY = re.compile(r"^\s*[\w.+-]+@[\w-]+(?:\.[\w-]+)+\s*$")
#: A lock opened by a face or a finger has no secret to store: "screen lock: uses face id".
_BIOMETRIC = re.compile(r"\b(?:face ?id|touch ?id|fingerprints?|face unlock|biometrics?|iris)\b", re.IGNORECASE)
#: A value that says its pin is a map's ("dropped a pin for the new office"): the key's "pin" is that one.
_MAP_PIN = re.compile(_MAP_PIN_SAID, re.IGNORECASE)


#: A place's name in a value: a capitalised word with a comma or a word of place beside it ("Saket, New Delhi 110017",
#: "godown Sanand ma che, pin code 382110").
_PLACE_SAID = re.compile(r"[A-Z][a-z]{2,}.*(?:,|\b(?:at|in|near|daggara|ma|mein|la|alli|e|te)\b)|"
                         r"(?:,|\b(?:at|in|near)\b).*[A-Z][a-z]{2,}")
_PIN_CODE_SAID = re.compile(r"\bpin\s?codes?\b|\bpincodes?\b|\bpostal\b|\bpost\s?codes?\b", re.IGNORECASE)


def _postal_said(value: str) -> bool:
    """Principle (round secrets48): a public number stays harmless by what it IS. An Indian postal PIN code is six
    digits beside a place or "pin code" in any language ("Saket, New Delhi 110017", "Maa office pin code 500081,
    Hitech City daggara", "deliver to PIN codes starting with 400 and 411"); a card's, a phone's or a lock's PIN is
    never written beside a place, and four digits are no postal code."""
    runs = re.findall(r"\d+", re.sub(r"(?<=\d{3}) (?=\d{3}\b)", "", value))
    if not runs or _SENSITIVE.search(value) or not all(len(r) == 3 or (len(r) == 6 and r[0] != "0") for r in runs):
        return False
    return bool(_PIN_CODE_SAID.search(value)) or (any(len(r) == 6 for r in runs) and bool(_PLACE_SAID.search(value)))


#: How one logs in named, not what with: "Login cheyyaan Google use cheyyunnu", "sign in with Microsoft" (round
#: secrets48): under a login's key, with no digit and no password-shaped word, no secret is given.
_LOGIN_BY = re.compile(r"\b(?:google|microsoft|apple|facebook|sso|okta|github|linkedin|otp-?less|magic\s+link)\b",
                       re.IGNORECASE)


def _harmless_code_named(value: str) -> bool:
    """Whether every code or pin ``value`` names is a harmless one ("dress code", "employee code", "pin code 500081"):
    a key's "code" is then that code (round secrets48: "kannada_code: Office ge dress code formal")."""
    return bool(re.search(r"\b(?:codes?|pins?)\b", value, re.IGNORECASE)) and \
        not re.search(r"\b(?:codes?|pins?)\b", _harmless_out(value), re.IGNORECASE)


def _key_reason(key: str, value: str) -> str | None:
    if re.search(r"\bpins?\b", _words(key)) and not _SENSITIVE.search(_words(key)) and _postal_said(value):
        return None  # "pin: Saket, New Delhi 110017": a postal PIN code beside its place (round secrets48)
    if _POSTAL_KEY.search(_words(key)) and _POSTAL_VALUE.match(value) and not _SENSITIVE.search(value) and \
            not _SENSITIVE.search(_words(key)):
        return None  # an Indian postal PIN code: "home pin code", "pin code delivery" (six digits or none)
    if _head(_words(key)) in _EVENT_HEAD and _SECRET_KEY.search(_words(key)) and \
            not _sentence(_harmless_out(value)) and not _STATUS_WORD.match(value):
        return "a password, code or key"  # "password_reset: tiger": an event's key over what may be the new secret
    words = _harmless_out(_words(key))
    if (_MAP_PIN.search(value) or _PINNED_POST.search(value)) and re.search(r"\bpins?\b", words):
        return None  # "office pin: dropped a pin ...", "pin_favorite_pizza: ..., pinned on Google Maps": a place
    if re.search(r"\bpass(?:es)?$", words) and _TICKET_PASS_SAID.search(value) and not _CODE_OR_WORD.search(value):
        return None  # "access_pass: Got a speaker pass for TechSparks ...": a ticket (round secrets50)
    if _LAST_FOUR.match(value):
        return None  # "bank account: ends in 7712": the last four digits name it, they open nothing
    if _head(words) in _STATUS_HEAD and _STATUS_WORD.match(value):
        return None  # "tpin_status: activated": the state of the secret, not the secret
    if _head(words) in _EVENT_HEAD and _sentence(_harmless_out(value)) and \
            not (_SECURITY_KEY.search(words) and _A_NAME.search(value.strip())):
        return None  # "password_change: changed my gmail password yesterday": an event, no secret given
    if _KEPT_WHERE.match(value) and not _CODE_OR_WORD.search(value):
        return None  # "2fa_recovery_codes: saved in 1Password": where it is kept, not what it is
    if _SECURITY_KEY.search(words) and _ANSWER_EVENT.search(value) and talk_only(value) and \
            not _A_NAME.search(value.strip()):
        return None  # "security_q: HDFC ke security sawaal bahut confusing hain": an opinion, no answer (secrets47)
    if _SECURITY_KEY.search(words) and _OPINION.search(value) and ":" not in value and not given_answer(value):
        return None  # "security_question_note: Doesn't like banks that still use security questions" (secrets49)
    if _SECURITY_KEY.search(words):
        return "the answer to a security question"  # "mothers maiden name": the name is the answer
    if _backup_codes(key, value):
        return "backup or recovery codes"  # "authenticator_backup: 4471-2290, 8813-0056"
    if _unlock_drawn(key, value):
        return "an unlock pattern"  # "pattern: 1-5-9-6-3 on the 3x3 grid"
    if _head(words) in _ANSWER_HEAD and not _sentence(_harmless_out(value)):
        return "the answer to a security question"  # "father_birthplace_answer: Kanpur"
    if _head(words) in _DATE_HEADS and (_DATE_ONLY.match(value) or _DURATION.match(value)) and \
            not _CARD_KEY.search(words):
        return None  # "passport expiry: 2031", "access token expiry: 1 hour": when, not what
    if words.split()[-1:] and words.split()[-1] in _HARMLESS_HEAD:
        return None  # "wifi provider", "sign in method": about something else
    if _SECRET_KEY.search(words) or _GLUED_KEY.search(_harmless_out(_words(key))):
        return "a password, code or key"
    if _EXPIRY_KEY.search(words) and _CARD_DATE.search(value):
        return "a card's expiry"
    if _ADMIN_KEY.search(words) and (_USER_AND_PASSWORD.match(value) or _SLASH_PAIR.match(value)):
        return "a login and password"
    if len(words.split()) <= _LABEL_WORDS and _CODE_KEY.search(_head(words)) and words not in ("code", "codes") and \
            not _harmless_code_named(value):
        return "a code or PIN"
    if re.search(r"\b(?:tokens?|queue)\b", words) and _QUEUE_TOKEN.search(value) and not _CODE_OR_WORD.search(
            _harmless_out(value)):
        return None  # "rto_token: Token 57 at the RTO, slot 11:15": a place in a queue (round secrets51)
    if _AMBIGUOUS_KEY.search(words) and not _sentence(_harmless_out(value)) and not _EMAIL_ONLY.match(value) and \
            not talk_only(value) and \
            not (_BIOMETRIC.search(value) and not re.search(r"\d", value)) and \
            not (_LOGIN_BY.search(value) and not re.search(r"\d", value) and not _password_shaped(value) and
                 not _SECRET_WORDS.search(_harmless_out(value))) and \
            not (_head(words) in _DATE_HEADS and _DATE_ONLY.match(value)):
        return "a password, code or key"
    if _LOCK_KEY.search(words) and _lock_code(_AMOUNT_SAID.sub(" · ", value)) and not _PLACE_NUMBER.search(words) and \
            not _PLACE_NUMBER_SAID.search(value):
        return "a lock's code"
    return None


#: Words before a year that make it a date ("in 2025", "since 2019").
_DATE_WORDS = {"in", "since", "by", "from", "until", "till", "before", "after", "of", "january", "february",
               "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
               "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
#: A word with a digit that is no code: "3G", "5G", "2FA", "B2B", "24x7", "1st".
#: A form's name too (round secrets48): "W-4", "I-9".
_UNIT_WORD = re.compile(r"^(?:[a-z]{1,2}-\d{1,4}|\d[a-z]{1,2}|[a-z]\d[a-z]|\d{1,2}x\d{1,2}|\d+(?:st|nd|rd|th))[.,;]?$",
                        re.IGNORECASE)
#: An amount of money or a share ("$400k", "₹1.2", "2M", "18%"): a number that is no code.
_AMOUNT = re.compile(r"^(?:[$₹€£][\d.,]+(?:k|m|mn|bn|cr|l)?|[\d.,]+(?:k|m|mn|bn|cr|%|x))[.,;]?$", re.IGNORECASE)


def _head(words: str) -> str:
    """The word a key names (its last, a parenthesis dropped: "door code (office)" names a code, "code style"
    a style), with a number's word before it kept ("pin number", "code no")."""
    kept = re.sub(r"\([^)]*\)|[()]", " ", words).split()
    while len(kept) > 1 and kept[-1] in ("number", "no", "num", "nr", "#"):
        kept = kept[:-1]
    return kept[-1] if kept else ""


def _lock_code(value: str) -> bool:
    """Whether ``value`` holds a code of digits that is not a year said as a date ("installed in 2021")."""
    for found in _DIGIT_CODE.finditer(value):
        before = value[:found.start()].split()
        if not (re.fullmatch(r"(?:19|20)\d\d", found.group(0)) and before and before[-1].lower() in _DATE_WORDS):
            return True
    return False


def _sentence(value: str) -> bool:
    """Whether ``value`` is a plain statement (three or more words, a function word, no token with a digit
    but an amount or a year said as a date: "in 2025", "since 2019")."""
    words = value.split()
    return len(words) >= 3 and bool(_FUNCTION_WORD.search(value)) and \
        not any(re.search(r"\d", w) and not _AMOUNT.match(w) and not _UNIT_WORD.match(w) and not _dated(words, i)
                # a number with its unit is a quantity (round secrets47): "after 100 days"
                and not _QUANTITY.match(" ".join(words[i:i + 2]))
                # a day beside its month is a date (round secrets48): "appointment on 12 June", "14 March 2029"
                and not _day_of_month(words, i)
                for i, w in enumerate(words))


def _day_of_month(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a day of the month beside its month's name ("12 June", "June 12,")."""
    if not re.fullmatch(r"(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?[.,;]?", words[i]):
        return False
    near = [w.lower().strip(".,;") for w in words[max(0, i - 1):i] + words[i + 1:i + 2]]
    return any(w in _DATE_WORDS and w not in ("in", "since", "by", "from", "until", "till", "before", "after", "of")
               for w in near)


def _dated(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a year after a word that makes it a date ("in 2025"; a bare 2019 may be a PIN)."""
    return bool(re.match(r"^(?:19|20)\d\d[.,;]?$", words[i])) and i > 0 and \
        words[i - 1].lower() in _DATE_WORDS


def _names_only(text: str) -> bool:
    """Whether ``text`` only names a secret's kind ("builds our login and OTP flows"): a plain sentence with no
    mark (``:``, ``=``) that would introduce the secret itself."""
    if talk_only(text):
        return True  # "OTP ab WhatsApp pe bhi aata hai": talk about the kind in any language (round secrets47)
    if not _sentence(text) or re.search(r"[:=]", text):
        return False
    return all(found.group("tok").lower() in _STATE for found in _INTRODUCED.finditer(text))


def _a_name(text: str, found: re.Match[str]) -> bool:
    """Whether a password word and the capitalised word after it, inside a sentence, are a name ("I work at
    Passcode Labs.", "LastPass"), not a password."""
    word, token = found.group("w"), found.group("tok")
    return found.start() > 0 and word[:1].isupper() and token[:1].isupper() and token[1:].islower() and \
        _sentence(text)


def _password_told(text: str) -> bool:
    """Whether a password word in ``text`` introduces a password (see :data:`_PASSWORD_WORD`)."""
    for found in _PASSWORD_WORD.finditer(text):
        token = found.group("tok").strip("\"'()").rstrip(".!?")  # "password yesterday." says when
        if text[found.end("plural") if found.group("plural") else found.end("w"):][:2].startswith("-") and \
                text[found.end("w"):][1:2].isalpha():
            continue  # round secrets48: a compound is a word, not a mark before a password ("key-person insurance")
        word = found.group("w").lower()
        shaped = bool(re.search(r"[\d\W]|[a-z][A-Z]", token))
        if found.group("plural") and not found.group("mark"):
            told = False  # "rotate passwords quarterly": passwords in general
        elif word == "key":  # "key is monsoon", "key: X" (a network's key); "key customers", "key to growth" no
            told = bool(found.group("mark")) and " to " not in found.group(0) and \
                token.lower() not in _STATE | _NOT_A_PASSWORD
        elif word in ("pass", "secret"):
            told = shaped  # "pass" and "secret" are common words: only a password-shaped word follows them
        elif found.group("mark"):
            told = token.lower() not in _STATE
        else:
            told = token.lower() not in _NOT_A_PASSWORD and not _a_name(text, found) and (
                shaped or found.group("end") is not None or not _sentence(text))
        if told and len(token) >= 3:
            return True
    return False


def _password_shaped(value: str) -> bool:
    """Whether ``value`` holds a word shaped like a password: letters, digits and a symbol (``@#!$%^&*``) inside
    it ("Sunny@123", "Jasmine!9"); an e-mail address, a handle (``@meera``), a hashtag or a price is not one."""
    for word in value.split():
        word = word.strip(".,;:()'\"")
        if re.fullmatch(r"[\w.+-]+@[\w-]+\.[\w.]+", word) or not word or not word[0].isalnum():
            continue
        if re.fullmatch(r"[A-Za-z]{1,3}[$€£₹][\d,.]+[kKmM]?", word):
            continue  # round secrets48: a currency's sign is no password's symbol ("S$1,480", "A$300")
        if re.search(r"[A-Za-z]", word) and re.search(r"\d", word) and re.search(r"(?<=\w)[@#!$%^&*]", word):
            return True
    return False


def _value_reason(value: str) -> str | None:
    text = _harmless_out(value.replace("_", " "))
    if _security_told(text):
        return "the answer to a security question"  # an event with no answer given ("forgot the answer") is kept
    if _SECRET_WORDS.search(text) and not _names_only(text):
        return "a password, code or key"
    if _password_told(text):
        return "a password"
    if _CODE_WORD.search(text) or _KEYED_IN.search(text) or _OPENS_WITH.search(text) or \
            _USED_TO_OPEN.search(text) or _LOCK_IS.search(text) or _KEYPAD_DIGITS.search(text) or \
            _CODE_BEFORE_NAME.search(text):
        return "a code or PIN"
    if _CODE_DEVICE.search(text) and _DIGIT_CODE.search(records_out(text)):
        # round secrets52: a record's number beside its word is no code ("Order number 304-8829174-5521 for the keypad")
        return "a lock's code"
    if len(_DIAL_TURN.findall(text)) >= 2:
        return "a lock's combination"
    if _CREDENTIAL_PAIR.search(text) or _LOGIN_PAIR.search(text) or _password_shaped(value) or \
            _USER_PASS.search(value):
        return "a login and password"
    if _GIFT_CODE.search(value):
        return "a gift card's code"
    return None


#: A wallet's words named as such, even short of a whole phrase: "seed: abandon ability able about", "my seed is
#: abandon ability able about": four or more plain lowercase words, with no common English word among them, under a
#: key naming a seed / mnemonic / recovery phrase, or after "seed (phrase|words) is" (a part of a phrase is still a
#: secret; "brand seed words: calm, earthy, honest" is a list, not a run of words, and is kept).
_SEED_KEY = re.compile(r"\b(?:seeds?|mnemonic|recovery phrase|recovery words)\b")
_WORD_RUN = re.compile(r"^\s*(?:[a-z]{3,8}\s+){3,}[a-z]{3,8}[.!]?\s*$")
_SEED_SAID = re.compile(r"\b(?:seed|mnemonic)(?: phrase| words)?\s+(?:is|are|was)\s+"
                        r"((?:[a-z]{3,8}\s+){3,}[a-z]{3,8})\s*[.!]?\s*$")
#: Words of a sentence about a funding round or a project that no wallet's words are taken from in practice.
_NOT_SEED_SAID = _NOT_SEED | {"this", "that", "these", "those", "going", "doing", "very", "really", "well", "good",
                              "great", "done", "over", "last", "next", "year", "month", "week", "today", "soon",
                              "closed", "closing", "raised", "still", "almost", "nearly"}


def _named_seed(key: str, value: str) -> bool:
    """A run of wallet words under a seed's key, or after "seed is" in what was said (see :data:`_SEED_KEY`)."""
    if _SEED_KEY.search(_words(key)) and _WORD_RUN.match(value) and not set(value.split()) & _NOT_SEED:
        return True
    said = _SEED_SAID.search(value)
    return said is not None and not set(said.group(1).split()) & _NOT_SEED_SAID


#: A list's label (round secrets48): a run of plain words under "grocery list:", "spelling words:", "brand words:" is
#: the list it says, unless a wallet's word is in the label or the key. Judged on harmless word lists (tuning48): a
#: spelling list of twelve nouns is all but one BIP-39 words, so the form alone cannot tell it from a phrase; its label
#: can.
_LIST_LABEL = re.compile(r"\b(?:list|lists|spelling|vocab\w*|names|menu|packing|tags|keywords|grocery|groceries|"
                         r"shopping|todo|to-do|brand|values|adjectives|nouns|tone|moodboard|mood\s+board|playlist|items|checklist|team|teams|"
                         r"colou?rs|members|people|staff|guests|cities|places|agenda|topics|shortlist|tagline)\b",
                         re.IGNORECASE)
_WALLET_LABEL = re.compile(r"\b(?:seed|wallet|recovery|backup|mnemonic|ledger|metamask|trezor|crypto|phrase|bitcoin|"
                           r"btc|eth|trust|phantom|coinbase|exodus|private)\b", re.IGNORECASE)


def _word_list(key: str, value: str) -> bool:
    """Whether ``key`` or the label before a colon in ``value`` names a list of words, not a wallet's phrase; or the
    run is of capitalised names few of which are a wallet's words ("Ravi Meera Arjun Priya ...": people, where
    "Abandon Ability Able ..." is still a phrase)."""
    label = value.split(":", 1)[0] if ":" in value[:60] else ""
    named = f"{_words(key)} {label}"
    if _LIST_LABEL.search(named) and not _WALLET_LABEL.search(named):
        return True
    titled = re.findall(r"\b[A-Z][a-z]{2,}\b", value)
    return len(titled) >= SEED_WORDS - 1 and bip39_share(titled) < 0.5 and not _WALLET_LABEL.search(named)


def _seed_phrase(value: str) -> bool:
    run = stops = 0
    for word in value.lower().replace(",", " ").split():  # a phrase written with capitals is still one
        word = word.strip(".!;:\"'()")
        if _SEED_WORD.match(word) and (word not in _NOT_SEED or stops == 0):
            stops += word in _NOT_SEED
            run += 1
            if run >= SEED_WORDS:
                return True
        else:
            run = stops = 0
    return False


def _number_reason(key: str, value: str) -> str | None:
    if _BANK_KEY.search(_words(key)) and _ACCOUNT_DIGITS.search(value.replace(" ", "").replace("-", "")):
        return "a bank account number"
    for run in _DIGIT_RUN.findall(value):
        digits = re.sub(r"\D", "", run)
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "a card number"  # a long number that fails Luhn (an order or tracking number) is kept
    if any(_iban_ok(m) for m in _IBAN.findall(value.upper())):
        return "an IBAN"
    for label, pattern in _IDS:
        if pattern.search(value):
            return label
    return None


#: Digits said as words, in every language of :data:`board.language.secret_use.DIGIT_WORDS`, and a dial's numbers
#: (:data:`board.language.secret_use.TENS_WORDS`).
_DIGIT_WORDS = DIGIT_WORDS
_NUMBER_WORD = "|".join(sorted([*_DIGIT_WORDS, *TENS_WORDS], key=len, reverse=True))
#: What a voice note puts between the digits (round secrets50): commas, dots, "uh", "um", "like", "then", "and".
_GAP = (r"(?:[\s,.…-]+(?:(?:uh+|um+|erm?|eh+m?|e{2,}|hmm+|like|then|and|and\s+then|y|et|und|poi|dann|puis|"
        r"luego|potem)(?=[\s,.…])[\s,.…-]*)*)")
_NUMBER_WORDS = frozenset([*_DIGIT_WORDS, *TENS_WORDS])


@functools.cache
def _spoken_run() -> re.Pattern[str]:
    """Three or more number words with gaps between them. Compiled on the first value that holds three number words
    (:func:`spoken_digits`), not at import: the table of some 230 words costs ~8 ms to compile (round secrets50)."""
    return re.compile(r"(?<!\w)(?:" + _NUMBER_WORD + r")(?:" + _GAP + r"(?:" + _NUMBER_WORD + r")){2,}(?!\w)",
                      re.IGNORECASE)


_KEY_SIGN = re.compile(r"\b(?:" + STAR_WORDS + r")\s+(?=\d)|(?<=\d)[\s,]+(?:" + HASH_WORDS + r")\b", re.IGNORECASE)
_STAR_SIGN = re.compile(STAR_WORDS, re.IGNORECASE)


def _spoken(found: re.Match[str]) -> str:
    """A run of number words as digits: single digits joined ("nine three seven two" is "9372"; groups said apart
    by commas, each of three or more digits, stay apart: a card read aloud in fours), a dial's numbers as dashed pairs
    ("twenty-two, fourteen, ninety" is "22-14-90")."""
    groups: list[list[str]] = []
    numbers: list[int] = []
    repeat, tens, after_tens = 1, False, -1
    for word in re.finditer(r",|\w+", found.group(0).lower()):
        said = word.group(0)
        if said == ",":
            groups.append([])
            continue
        if said in TENS_WORDS:
            numbers.append(TENS_WORDS[said])
            tens = True
            # "thirty-one": a tens word, then a digit's word right after it, is one number
            after_tens = word.end() if TENS_WORDS[said] >= 20 else -1
            continue
        digit = _DIGIT_WORDS.get(said, "")
        if digit in ("double", "triple"):
            repeat = 2 if digit == "double" else 3
            continue
        if not digit:
            continue
        if after_tens >= 0 and re.fullmatch(r"[\s-]", found.group(0)[after_tens:word.start()]) and digit != "0":
            numbers[-1] += int(digit)
            after_tens = -1
            continue
        after_tens = -1
        numbers.extend([int(digit)] * repeat)
        if not groups:
            groups.append([])
        groups[-1].append(digit * repeat)
        repeat = 1
    if tens:
        return "-".join(f"{n:02d}" for n in numbers) if len(numbers) >= 3 else found.group(0)
    kept = [g for g in groups if g]
    joined = "".join("".join(g) for g in kept)
    if len(joined) < 3 or not joined.isdigit():
        return found.group(0)
    if len(kept) >= 2 and all(len("".join(g)) >= 3 for g in kept):
        return " ".join("".join(g) for g in kept)
    return joined


def spoken_digits(value: str) -> str:
    """``value`` with digits said as words written as digits (:func:`_spoken`) when three or more such words run
    together, fillers between them or not (one English "one" or Hindi "do" alone stays a word), a keypad's "star 1970"
    as "*1970", "1970 hash" (or "krzyżyk", "dièse"...) as "1970#", and single digits spaced out ("1 9 7 0") joined."""
    if sum(word in _NUMBER_WORDS for word in re.findall(r"\w+", value.lower())) >= 3:
        value = _spoken_run().sub(_spoken, value)  # most facts hold no three number words: no regex is run
    value = _KEY_SIGN.sub(lambda m: "*" if _STAR_SIGN.match(m.group(0)) else "#", value)
    # round secrets51: three spaced digits too ("the three digits on the back ... are 7 0 9")
    return re.sub(r"(?<![\w.,])\d(?:\s\d){2,7}(?![\w.]|,\d)(?!\s\d)", lambda m: m.group(0).replace(" ", ""), value)


def secret_reason(key: str, value: str, model: SecretModel | None = None) -> str | None:
    """Why ``key: value`` looks like a secret (never stored), or None; see the module docstring."""
    return _decide(key, value, model)


def sentence_reason(sentence: str, model: SecretModel | None = None) -> str | None:
    """Why a sentence someone said tells a secret, or None: only what the words say counts, never a key's
    rules ("I work at Vault Capital." is no vault; "my card pin is 4455" is a PIN)."""
    return _decide(None, sentence, model)


def as_read(value: str) -> str:
    """``value`` as the rules and the learned model read it: native digits and words in Latin letters, digits said as
    words written as digits, tone marks and a host's port out, a map pin's emoji in words."""
    value = spoken_digits(native_to_latin(value))  # "पासवर्ड" is "password", "४४७१" is "4471" (round secrets47)
    value = ports_out(marks_out(value))  # round secrets51: "nọ́mbà àṣírí" is "nomba asiri"; a host's port is no code
    return value.replace("\U0001f4cd", " location pin ")  # round secrets50: "📍 <a café>" is a place on a map


def _decide(key: str | None, value: str, model: SecretModel | None) -> str | None:
    """The rules' reason and the learned model's score together (see the module docstring)."""
    model = model or secret_model()
    value = as_read(value)
    shown = masked_out(value)
    if (shown != value and not re.search(r"\d", shown)) or event_only(value):
        # every number in it masked ("XXXX XXXX 9021"), or only an event about a secret's kind with no code given
        # ("Netbanking ka password bhool gaya tha"): no rule reads a secret in it (round secrets47)
        rule = None
    else:
        rule = (_key_reason(key, value) if key is not None else None) or _told(key or "", value)
    if rule is not None and model.veto <= 0.0:
        return rule  # the rules are the floor: no score can let it through, so none is computed (round secrets52)
    score = model.score(key, value)
    if not model.decide(score, rule is not None):
        return None
    return rule or f"looks like a secret to the learned model ({score:.2f})"


#: A DVLA driving licence number: five letters of the surname (9s pad a short one), six digits of the birth date (the
#: month's tens digit plus 5 for a woman), two initials (9 pads a missing one), a digit, two check characters.
_UK_LICENCE = re.compile(r"\b[A-Z][A-Z9]{4}\d[0156]\d[0-3]\d\d[A-Z][A-Z9]\d[A-Z0-9]{2}\b")


def _told(key: str, value: str) -> str | None:
    """Why ``value`` (under ``key``, for a bank's account number) tells a secret, whatever its key names."""
    handle = _head(_words(key)) in _HANDLE_HEADS and len(value.split()) == 1 and not _SECRET_WORDS.search(value)
    reason = None if handle else _value_reason(value)
    if reason is None and _BACKUP_CODES.search(value) and _backup_codes("", value):
        reason = "backup or recovery codes"  # "my backup numbers are 4471-2290, 8813-0056"
    if reason is None and _unlock_drawn("", value):
        reason = "an unlock pattern"  # "I draw a Z from the top left to unlock my phone"
    if reason is None and (_seed_phrase(value) or _named_seed(key, value) or
                           seed_tail(value, _NOT_SEED_SAID, bool(_WALLET_LABEL.search(_words(key))))) and \
            not _word_list(key, value):
        reason = "a seed or recovery phrase"
    reason = reason or _number_reason(key, records_out(masked_out(value)))
    # round secrets47: a secret read by its form and its use, in any language (board.language.secret_use)
    if reason is None:
        plain = _harmless_out(masked_out(value))  # read once for both (round secrets48: the filter's cost)
        reason = use_reason(plain)
        # round secrets48: national IDs, card codes, numbered wallet words, turns and keypads by their form
        formed = None if reason else form_reason(plain)
        if formed == "a seed or recovery phrase" and _word_list(key, value):
            formed = None  # "Spelling words: 1. apple 2. river ...": a list its label names
        reason = reason or formed
        # round secrets49: a PIN's word of any language, a code by its use, an ID by its checksum or shape
        reason = reason or languages_reason(plain)
        # round secrets50: a credential beside getting in, a host's pair, a device's code, a verification code, IDs
        reason = reason or secrets50_reason(_words(key), plain)
        # round secrets51: a code a device takes, an override, a TAN; a user and then a password; a bank's question;
        # turns in any language; IDs with a birth date inside
        reason = reason or secrets51_reason(plain)
        # round secrets52: a British driving licence number by its form (surname, birth date, initials, check letters)
        if reason is None and _UK_LICENCE.search(plain):
            reason = "a national identity number"
    if reason is None and (_TOKENS.search(value) or _RANDOM.search(value) or _BASE64ISH.search(value)):
        reason = "an API key or token"
    if reason is None and mask(value) != value:
        reason = "a secret from Sabha's own configuration"
    return reason
