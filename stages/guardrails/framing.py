"""What an LLM writes around its facts: framing, which states nothing to check, and refusals,
which state something about the evidence.

- framing: pleasantries and offers ("Sure, I can help you with that!"), lead-ins to a list
  ("Based on the given passages, here are some steps:", any sentence ending in ":" without a
  figure), closers ("I hope this helps", "Let me know if…", "Good luck!"), bare labels
  ("In summary:"), advice to see a professional. Reported as `not_a_claim`: it never blocks and
  costs no judge call.
- refusal: "The passages do not mention X", "There is no information about X", "I am unable to
  provide…". It is a claim about the evidence: what can be proven is that the evidence lacks X
  (a content word of X occurs in no span), which supports it; when every word of X is in the
  evidence the refusal may be wrong (the evidence may state it) and it scores as weak.

Both are recognised on the whole claim, after a preamble ("Based on the passages,") is set aside;
a sentence that states a fact after its preamble stays a claim.
"""

from __future__ import annotations

import re

from stages.common.text import content_tokens

VERSION = "1.4.0"

_SOURCES = (
    r"(?:passages?|context|information(?: provided| given)?|texts?|documents?|sources?|"
    r"search results|results|excerpts?|articles?|data)"
)
PREAMBLE_RE = re.compile(
    r"(?i)^(?:(?:sure|certainly|of course|absolutely|okay|ok|alright|great question|good question"
    r"|yes|hello|hi)\s*[!,.]\s*)*"
    r"(?:(?:based on|according to|from|using|given|in|with)\s+(?:the\s+|these\s+|this\s+)?"
    r"(?:given\s+|provided\s+|above\s+|available\s+|following\s+|retrieved\s+|three\s+)?"
    rf"{_SOURCES}(?:\s+(?:provided|given|above|you provided|you gave))?\s*,?\s*)?"
)
FRAMING_RE = re.compile(
    r"(?i)^(?:here(?:'s|’s| is| are)\b|below (?:is|are)\b|the following\b|let me\b|let's\b|"
    r"i(?:'ll|’ll| will| can| could| would| have| am going to| 'd|'d|’d) (?:be (?:happy|glad)|"
    r"help|try|provide|explain|answer|give|summarize|list|outline|do my best)\b|"
    r"i hope\b|hope (?:this|that|it)\b|please (?:provide|clarify|specify|share|give|consult|"
    r"refer|check|contact|ask)\b|let me know\b|feel free\b|if you have any\b|"
    r"please let me know\b|good luck\b|best of luck\b|enjoy\b|cheers\b|thanks?\b|thank you\b|"
    r"have a (?:great|good|nice)\b|that(?:'s| is) (?:it|all)\b|sure\b|certainly\b|"
    r"of course\b|absolutely\b|great question\b|"
    r"(?:in summary|in conclusion|to summarize|to sum up|overall|in short|summary|answer|"
    r"conclusion|note)\s*[:.,!]?\s*$)"
)
# A line naming where the answer came from, not what it says: "Source: pricing_api",
# "Sources: [1], [2]" (references lifted), "References: get_order". With a figure it stays a claim.
ATTRIBUTION_RE = re.compile(
    r"(?i)^\W*(?:sources?|references?|citations?|cited(?: sources?)?|retrieved from|"
    r"data sources?)\s*(?::|-|–|—)"
)
ADVICE_RE = re.compile(
    r"(?i)\b(?:consult|speak (?:with|to)|talk (?:with|to)|check with|see|contact|seek (?:the )?"
    r"(?:advice|help) (?:of|from))\b.{0,40}\b(?:doctor|professional|physician|expert|healthcare "
    r"provider|specialist|veterinarian|vet|lawyer|attorney|accountant|pharmacist|dermatologist)s?\b"
)
# Pointing the reader elsewhere: "you may need to consult additional sources beyond the given
# passages", "for more details, refer to other resources"
ELSEWHERE_RE = re.compile(
    r"(?i)\b(?:consult|refer to|look (?:at|for|into)|check|seek|search(?: for)?|see|read)\s+"
    r"(?:\w+\s+){0,2}(?:other|additional|further|more|external|outside|different|reliable)\s+"
    r"(?:sources?|resources?|references?|materials?|guides?|information)\b"
    rf"|\b(?:refer|go back|return) to (?:the |these )?{_SOURCES} for (?:\w+ )?(?:guidance|help|"
    r"details|information|instructions)\b"
)
# Where a reader is sent to check for themselves: a maker, a professional, an official or local
# body, the product's own documentation. "it may be necessary to check the manufacturer's
# instructions", "it's best to consult your local council", "contact your bank".
_AUTHORITY = (
    r"(?:manufacturer|maker|dealer|retailer|vendor|supplier|provider|carrier|insurer|bank|lender|"
    r"employer|landlord|school|university|council|authorit(?:y|ies)|government|agency|office|"
    r"department|embassy|consulate|service cent(?:er|re)|support|customer service|"
    r"(?:user|owner'?s?|product|instruction|service) manual|manual|documentation|label|packaging|"
    r"instructions|guidelines|official (?:website|site|source|guidance)|website|"
    r"mechanic|technician|electrician|plumber|contractor|installer|advisor|adviser|counsel(?:l?or)?|"
    r"doctor|professional|physician|expert|healthcare provider|specialist|veterinarian|vet|lawyer|"
    r"attorney|accountant|pharmacist|dermatologist|dentist|nutritionist|dietitian|therapist)"
)
CHECK_WITH_RE = re.compile(
    r"(?i)\b(?:consult(?:ing)?|check(?:ing)?(?: with)?|contact(?:ing)?|ask(?:ing)?|refer(?:ring)? "
    r"to|speak(?:ing)? (?:with|to)|talk(?:ing)? (?:with|to)|visit(?:ing)?|verify(?:ing)? with|"
    r"seek(?:ing)? (?:the )?(?:advice|help|guidance) (?:of|from)|confirm(?:ing)? with|"
    r"reach(?:ing)? out to|follow(?:ing)?|read(?:ing)?|review(?:ing)?)\s+"
    rf"(?:[\w'’-]+\s+){{0,4}}?{_AUTHORITY}s?\b"
)
SEEK_HELP_RE = re.compile(
    r"(?i)\bseek(?:ing)? (?:immediate |prompt |urgent )?(?:medical|professional|legal|expert) "
    r"(?:help|attention|advice|care|assistance|guidance|treatment)\b"
)
# A name (a capitalised word past a sentence's first, an acronym) is a fact to check: a hedge or a
# piece of advice that names one ("check with Rollstone Bank") stays a claim.
NAME_IN_TEXT_RE = re.compile(r"(?<![.!?:]\s)(?<!^)\b(?:[A-Z][a-z]+[A-Z]?[\w&-]*|[A-Z]{2,}s?)\b")
NOT_NAMES = frozenset({"I", "Note", "Please", "However", "Therefore", "Additionally", "Also"})


def _names(body: str) -> list[str]:
    return [m.group(0) for m in NAME_IN_TEXT_RE.finditer(body) if m.group(0) not in NOT_NAMES]


# Hedges: how sure the answer can be, or that it depends, stated with no fact of its own.
HEDGE_RE = re.compile(
    r"(?i)\b(?:(?:difficult|hard|impossible|not possible|challenging|tricky) to "
    r"(?:\w+ly )?(?:say|determine|tell|know|answer|predict|estimate|give|provide|pinpoint|"
    r"conclude|state|assess|confirm)\b"
    r"|without (?:more|additional|further|specific|more specific|more detailed|knowing|"
    r"additional specific|further specific|the specific|the exact)\b"
    r"|cannot be (?:\w+ly )?(?:determined|answered|known|said|confirmed|concluded)\b"
    r"|(?:may|can|might|could|will|would|often|usually|generally|tends? to) (?:\w+ly )?"
    r"(?:vary|differ)\b"
    r"|\b(?:it|this|that|the answer|which one|what works)(?: all)? (?:really |ultimately )?"
    r"(?:depends|may depend|can depend|will depend|varies)(?:\s*[.!;]?\s*$| on (?:various|several|"
    r"many|a (?:number|variety) of|different|individual|personal|your|one's|the (?:specific|"
    r"individual|particular|situation|circumstances|person)))"
    r"|(?:not|no) (?:a )?(?:one-size-fits-all|definitive|definite|conclusive|clear-cut|"
    r"straightforward|simple|exact) (?:answer|rule|formula|number|figure|way)\b"
    r"|(?:is|are) not (?:fully |entirely )?(?:conclusive|definitive|certain|clear)\b"
    r"|(?:best|a good idea|advisable|recommended|wise|important|necessary|helpful|worth) "
    r"(?:\w+ )?to (?:double-)?check\b"
    # "the best way … would depend on the specific design": what it depends on is left open
    r"|\b(?:depends?|depending|varies|vary|varying) (?:\w+ )?(?:up)?on (?:the (?:specific|"
    r"individual|particular|exact|situation|circumstances|case)|your|one's|their (?:own|specific|"
    r"individual)|individual|personal|various|several|many|a (?:number|variety) of|different)\b"
    # "there may be other factors at play", "there may be local regulations … to consider"
    r"|\bthere (?:may|might|could|can) (?:also )?be (?:\w+ ){0,3}?(?:factors|considerations|"
    r"exceptions|variables|regulations|restrictions|requirements|limitations|nuances)\b"
    # "additional research or professional guidance may be required"
    r"|\b(?:additional|further|more|professional|expert) (?:research|information|investigation|"
    r"guidance|advice|help|details|consultation)(?: or (?:\w+ ){0,2}?(?:research|information|"
    r"guidance|advice|help|details|consultation))? (?:may|might|would|could|will)? ?(?:also )?"
    r"(?:be|is|are) (?:required|needed|necessary|helpful)\b)"
)
# The answer talking about itself or its passages: "these steps are based on the passages",
# "I may need to revise my answer", "the answer to the question is provided above".
ABOUT_ANSWER_RE = re.compile(
    r"(?i)\b(?:my|this|the above|these|the) (?:answer|response|instructions|steps|"
    r"information|summary|list|explanation|suggestions|tips)\b.{0,60}\b(?:based on|"
    r"(?:provided|given|outlined|listed|described|shown|mentioned) (?:above|in the passages?)|"
    r"from the passages?|revise|update|partial(?:ly)?|incomplete|general|not (?:be )?exhaustive|"
    r"(?:may|might) not (?:be|apply))"
    r"|\bi (?:may|might|would|will|can) (?:need to )?(?:revise|update|refine|clarify)\b"
    # "With these steps and the right conditions, you should be able to grow dahlias"
    r"|^(?:\w+,\s*)?(?:with|by following|following|after following) (?:these|the above|all "
    r"(?:of )?these|the (?:steps|tips|instructions|methods) (?:above|outlined|listed))\b[^.]{0,60}"
    r",\s*you (?:should|will|can|would) (?:then )?(?:be able to|have)\b"
    # "these methods should help in removing the stains": the answer vouching for itself
    r"|^(?:\w+,\s*)?(?:these|the above|all (?:of )?these|the (?:steps|tips|instructions|methods) "
    r"(?:above|outlined|listed)) (?:steps|tips|instructions|methods|suggestions|remedies|"
    r"strategies)? ?(?:should|will|can|may|might) (?:\w+ )?(?:help|work|allow|enable)\b"
)
REFUSAL_RE = re.compile(
    rf"(?i)\b{_SOURCES}\b[^.]{{0,60}}?\b(?:do(?:es)? not|don't|doesn't|did not|didn't|fails? to|"
    r"never)\s+(?:\w+\s+)?(?:mention|provide|contain|include|specify|say|state|give|address|"
    r"discuss|offer|have|indicate|cover|explain|list|answer|describe|tell|reference)s?\b"
    r"|\b(?:there is|there's|there are|i (?:found|see|could find|can find))\s+no\s+"
    r"(?:(?:specific|direct|explicit|clear|further|additional|other|more|relevant)\s+)?"
    r"(?:information|mention|data|"
    r"details?|answer|indication|evidence)\b"
    r"|\b(?:i(?:'m|’m| am)?\s+)?(?:unable|not able) to\s+(?:provide|find|answer|determine|give|say|"
    r"confirm)\b|\bi (?:cannot|can't|can’t|could not|couldn't) (?:provide|find|answer|determine|"
    r"give|say|confirm)\b"
    r"|\bit is not possible to (?:answer|determine|say|tell|know)\b"
    r"|\b(?:is|are|was|were) not (?:explicitly |specifically |directly )?(?:mentioned|specified|"
    rf"stated|provided|given|discussed|addressed|included|listed|clear|present)\s+in\s+"
    rf"(?:the|any of the)"
    rf"\s+(?:given\s+|provided\s+)?{_SOURCES}"
    # "None of the passages provide a recipe", "neither passage mentions"
    rf"|\b(?:none of (?:the|these|those)|neither(?: of the)?|no)\s+(?:given\s+|provided\s+)?"
    rf"{_SOURCES}\s+(?:\w+\s+)?(?:mention|provide|contain|include|specify|say|state|give|address|"
    r"discuss|offer|have|indicate|cover|explain|list|answer|describe|tell|reference)s?\b"
    # "there is no specific formula provided for …": what the passages lack, said of them
    r"|\bthere (?:is|are|was|were) no\s+(?:[\w-]+\s+){1,3}?(?:provided|given|mentioned|stated|"
    r"specified|listed|included|available)\b"
    # "… the exact percentage is not specified.": a sentence that ends on what is not given
    r"|\b(?:is|are|was|were) not (?:explicitly |specifically |directly |clearly )?(?:mentioned|"
    r"specified|stated|provided|given|discussed|addressed|included|listed)\s*[.!]?\s*$"
)
# Words a refusal uses to name what is missing, not the missing thing itself
BOILERPLATE = frozenset(
    content_tokens(
        "information specific specifically details detail exact exactly any mention mentions "
        "about regarding concerning related data direct explicit clear answer question passages "
        "passage context provided given text documents sources entirety complete however "
        "therefore unable able provide find determine say confirm based"
    )
)


# Advice is said to the reader: "you should", "it's best to", "be sure to", an imperative
ADVICE_LEAD_RE = re.compile(
    r"(?i)^(?:\w+,\s*)?(?:(?:consult|check|contact|ask|refer|speak|talk|visit|verify|seek|confirm|"
    r"reach|follow|read|review)\b|(?:please|always|also)\b)"
    r"|\b(?:you|one|they|readers?|users?|owners?|customers?)\s+(?:should|must|may|might|can|could|"
    r"will|would|need to|have to|may want to|might want to|are advised to|are encouraged to)\b"
    r"|\b(?:it(?:'s|’s| is| would be| may be| might be)|is)\s+(?:always\s+|also\s+)?(?:best|a good "
    r"idea|advisable|recommended|wise|important|necessary|essential|helpful|worth|suggested|"
    r"prudent)\b|\bbe sure to\b|\bmake sure to\b|\bdon'?t forget to\b"
)
META_WORDS = frozenset(
    content_tokens(
        "therefore thus so answer based found can see understand necessary sufficient enough "
        "relevant needed required useful helpful provides contains"
    )
)


def names_sources(text: str) -> bool:
    """A line that names where the answer came from ("Sources:", "References: get_order")."""
    return bool(ATTRIBUTION_RE.search(strip_preamble(text)))


def strip_preamble(text: str) -> str:
    return PREAMBLE_RE.sub("", text, count=1).strip()


# A figure that is part of a name ("Xbox 360", "iPhone 6", "Windows 10", "G1", "P60") spells the
# name, it counts nothing; a year is never one ("Windows 2000" stays a figure), nor is a figure
# with a unit or a sign after it.
_UNITS = (
    r"(?i:mg|g|kg|km|m|cm|mm|ml|l|lbs?|oz|in|ft|inch(?:es)?|feet|miles?|mph|hours?|hrs?|minutes?|"
    r"mins?|seconds?|days?|weeks?|months?|years?|percent|dollars?|euros?|pounds?|[kmgt]b|times)"
)
NAME_FIGURE_RE = re.compile(
    r"\b(?:[A-Z]\w*|[a-z]+[A-Z]\w*)[ -](?!(?:1[0-9]|20)\d\d\b)\d{1,4}\b"
    rf"(?![.,-]?\d|-|\s*(?:%|°|{_UNITS}\b))"
    r"|\b[A-Za-z]+\d+[A-Za-z\d]*\b"
)
# A lead-in that points at the list after it: "follow these steps:", "here's how to …:"
POINTS_AT_LIST_RE = re.compile(
    r"(?i)\b(?:these|the following|as follows|below)\b|^(?:\w+,\s*)?here(?:'s|’s| is| are)\b"
)


def _plain_figures(body: str) -> bool:
    """A figure other than one that spells a name."""
    return bool(re.search(r"\d", NAME_FIGURE_RE.sub(" ", body)))


def kind_of(text: str) -> str:
    """claim | framing | refusal, from the claim's text (markers and references lifted)."""
    if REFUSAL_RE.search(text):
        return "refusal"
    body = strip_preamble(text)
    if not re.search(r"\w", body):
        return "framing"
    has_figure = bool(re.search(r"\d", body))
    # a pleasantry, a lead-in or a question counts nothing by a name's digits ("Good luck with
    # your G1 test!", "To set up an Xbox 360 controller, follow these steps:")
    figure = _plain_figures(body)
    if (FRAMING_RE.search(body) or ATTRIBUTION_RE.search(body)) and not figure:
        return "framing"
    lead_in = body.rstrip().endswith(":")
    if lead_in and (not has_figure or not figure and POINTS_AT_LIST_RE.search(body)):
        return "framing"  # a lead-in to the list or passage that follows
    if body.rstrip().rstrip("\"'”’)").endswith("?") and not figure:
        return "framing"  # a question asks, it states nothing: "Would you like me to track it?"
    if (ADVICE_RE.search(body) or ELSEWHERE_RE.search(body)) and len(body.split()) <= 30:
        return "framing"
    if (
        not has_figure
        and not _names(body)
        and len(body.split()) <= 40
        and (
            (CHECK_WITH_RE.search(body) or SEEK_HELP_RE.search(body))
            and ADVICE_LEAD_RE.search(body)
            or HEDGE_RE.search(body)
            or ABOUT_ANSWER_RE.search(body)
        )
    ):
        return "framing"  # a hedge, a remark about the answer, advice to check elsewhere
    if not set(content_tokens(body)) - BOILERPLATE - META_WORDS:
        return "framing"  # "The answer is based on the information provided in the passages."
    return "claim"


def refusal_support(text: str, spans: list[str]) -> tuple[float, str]:
    """(score, reason) of a refusal: 1.0 when the evidence lacks a content word of what it says
    is missing (or it names nothing), 0.6 (weak) when the evidence holds every such word."""
    match = REFUSAL_RE.search(text)
    if match is None:
        return 1.0, "refusal: nothing specific to check"
    after = text[match.end() :]
    subject = text[: match.start()] if match.group().lower().split()[0] in ("is", "are") else after
    if re.search(r"(?i)\bnot (?:explicitly |specifically |directly )?\w+\s+in\b", match.group()):
        subject = text[: match.start()] + " " + after
    wanted = set(content_tokens(subject)) - BOILERPLATE
    if not wanted:
        return 1.0, "refusal: names nothing the evidence could hold"
    held = set(content_tokens(" ".join(spans)))
    missing = sorted(wanted - held)
    if missing:
        return 1.0, f"refusal: the evidence indeed lacks {', '.join(missing[:5])}"
    return 0.6, "refusal: the evidence mentions every word of what it says is missing"
