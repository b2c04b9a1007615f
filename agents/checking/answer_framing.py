"""What an agent writes around the facts of its tool results, in the languages agents answer in
(English, Spanish, German, French, Italian, Portuguese): framing, which states nothing about a
result.

The claim checker's own framing rules are written for English RAG answers. An agent's answer
adds its own: an acknowledgement ("Sure!", "¡Claro!", "Erledigt."), an offer ("Let me know if
you want to change anything", "Dites-moi si…", "Sag Bescheid, wenn…"), a hedge about the data
("I'd double-check this before relying on it", "Die Angaben können sich noch ändern"), a lead-in
to a list ("Esto es lo que he encontrado:"), and a lead-in naming the tool the answer restates
("Según get_invoice: …", "Laut create_issue: …"). The first four are `not_a_claim`; the last is
set aside so that the sentence after it is what gets checked.

A sentence with a figure or an identifier is never an offer or a hedge here: one that names a
value ("the total may change from 120 €") still states it.
"""

from __future__ import annotations

import re

VERSION = "1.3.0"

# An acknowledgement said alone: the whole sentence is one of these.
_ACK = (
    r"sure|of course|certainly|absolutely|okay|ok|alright|all set|done|all done|got it|"
    r"no problem|great|perfect|here you go|booked|scheduled|"
    r"claro|por supuesto|desde luego|vale|listo|hecho|perfecto|de acuerdo|reservado|"
    r"hecho está|ya está|"
    r"klar|natürlich|gerne|gern|sicher|okay|erledigt|fertig|gebucht|perfekt|alles klar|"
    r"bien sûr|d'accord|c'est fait|voilà|parfait|entendu|réservé|c'est noté|"
    r"certo|certamente|va bene|d'accordo|fatto|ecco|perfetto|nessun problema|"
    r"claro|com certeza|tudo certo|feito|pronto|perfeito|combinado|sem problema"
)
# a closing mark or emoji after an acknowledgement ("Done ✅", "Erledigt 👍")
ACK_RE = re.compile(rf"(?i)^\W*(?:{_ACK})(?:\s*[,!.]\s*(?:{_ACK}))*[\s!.…]*[^\w\s]*\s*$")
# That the agent looked, said alone ("I checked.", "J'ai vérifié."): no finding in it. Before a
# colon it is no intro to set aside: what follows is what it found.
CHECKED_RE = re.compile(
    r"(?i)^\W*(?:"
    r"i(?:'ve| have)? (?:just )?(?:checked|looked)(?: (?:it|that|this))?(?: for you)?|"
    r"(?:lo |ya lo )?he (?:comprobado|revisado|verificado|consultado)|lo comprobé|"
    r"j'ai (?:vérifié|regardé|consulté)|c'est vérifié|"
    r"ich habe (?:es |das )?(?:nachgesehen|nachgeschaut|geprüft)|hab(?:e)? nachgesehen|"
    r"ho (?:controllato|verificato|guardato)|(?:eu )?(?:verifiquei|conferi|consultei)"
    r")[\s!.…]*$"
)

# An offer to do more, or an invitation to ask: said to the reader, about nothing in a result.
OFFER_RE = re.compile(
    r"(?i)^\W*(?:"
    r"anything else\b|¿?(?:necesitas|necesita|quieres) algo más\b|autre chose\b|"
    r"(?:brauchst du|brauchen sie|kann ich) (?:sonst )?noch\b|"
    r"let me know\b|tell me if\b|just let me know\b|feel free\b|if you(?:'d| would)? (?:like|want|"
    r"need)\b|would you like\b|want me to\b|shall i\b|should i\b|i can also\b|happy to help\b|"
    r"dime si\b|avísame\b|avisame\b|si (?:quieres|quiere|deseas|desea|necesitas|necesita)\b|"
    r"¿?quieres que\b|¿?(?:te|le) gustaría\b|no dudes en\b|"
    r"dites-moi\b|dis-moi\b|si vous (?:voulez|souhaitez|avez besoin)\b|si tu (?:veux|souhaites)\b|"
    r"n'hésitez pas\b|n’hésitez pas\b|voulez-vous\b|souhaitez-vous\b|"
    r"sag(?:en sie)? (?:mir )?bescheid\b|gib (?:mir )?bescheid\b|geben sie (?:mir )?bescheid\b|"
    r"melde dich\b|melden sie sich\b|wenn du\b.*\b(?:möchtest|willst|brauchst)\b|"
    r"wenn sie\b.*\b(?:möchten|wollen|brauchen)\b|soll ich\b|möchtest du\b|möchten sie\b|"
    r"fammi sapere\b|fatemi sapere\b|mi faccia sapere\b|dimmi se\b|se (?:ti|le|vi) serv|"
    r"se (?:vuoi|desideri|hai bisogno)\b|vuoi che\b|posso (?:anche|aiutarti)\b|"
    r"diz[- ]me\b|diga[- ]me\b|avisa[- ]me\b|me avis[ae]\b|se (?:precisares|precisar|quiseres|"
    r"quiser)\b|queres que\b|quer que\b|posso (?:também|ajudar)\b"
    r")"
)
# A hedge about the data as a whole: how sure it is, that it may change, to check it first.
HEDGE_RE = re.compile(
    r"(?i)\b(?:"
    r"double[- ]check|check (?:this|it|that) (?:before|again)|before relying on|"
    r"(?:may|might|could|can) (?:still )?change|subject to change|may not be (?:up to date|"
    r"current|accurate|final)|as of (?:now|writing)|"
    r"(?:pueden?|podrían?) (?:cambiar|variar)|sujet[oa]s? a cambios|"
    r"conviene (?:verificar|comprobar|confirmar)|te recomiendo (?:verificar|comprobar|confirmar)|"
    r"(?:peu(?:ven)?t|pourrai(?:en)?t) (?:encore )?(?:changer|évoluer|varier)|"
    r"susceptibles? d[e'’] ?(?:changer|évoluer)|sous réserve|"
    r"je (?:vous )?(?:conseille|recommande) de (?:vérifier|revérifier|confirmer)|"
    r"(?:kann|können|könnte|könnten) sich (?:noch )?(?:ändern|verschieben)|ohne gewähr|"
    r"vorbehaltlich|bitte (?:noch(?:mal)? )?(?:prüfen|überprüfen|bestätigen)|"
    r"double[- ]check(?:ing|ed)?|worth (?:re-?)?(?:checking|verifying|confirming)|"
    r"(?:if|when) (?:it|this) (?:matters|is important)|"
    r"(?:es|sería|seria) (?:mejor|conveniente) (?:verificar|comprobar|revisar)|"
    r"conviene (?:revisarlo|comprobarlo|verificarlo|confirmarlo)|si es importante|"
    r"à (?:vérifier|revérifier|confirmer)|si c'est important|mieux vaut vérifier|"
    r"im zweifel|lieber (?:noch(?:mal)? )?(?:nachsehen|nachschauen|prüfen)|wenn es wichtig ist|"
    r"falls (?:es )?wichtig|"
    r"meglio (?:verificare|controllare)|conviene (?:verificare|controllare)|se è importante|"
    r"(?:melhor|convém|vale a pena) (?:verificar|confirmar|conferir)|se (?:for|é) importante|"
    r"potrebbero? (?:cambiare|variare)|(?:pode|podem) (?:mudar|variar)"
    r")(?!\w)"
)
# A statement of where the answer came from, said alone: "That's what the API returned just
# now." It names no value, so there is nothing in it a result could contradict.
SOURCE_SAID_RE = re.compile(
    r"(?i)^\W*(?:"
    r"(?:that's|that is|this is) (?:what|how) (?:the )?(?:api|tool|system|service|server) "
    r"(?:just )?(?:returned|reported|says|said|gave|shows)|"
    r"(?:eso|esto) es lo que (?:la api|el sistema|la herramienta|el servicio) "
    r"(?:acaba de devolver|ha devuelto|devolvió|devuelve|indica)|"
    r"(?:c'est|voilà) ce que (?:l['’]api|l['’]outil|le système|le service) "
    r"(?:vient de (?:renvoyer|retourner)|a (?:renvoyé|retourné)|renvoie|indique)|"
    r"so hat es (?:die api|das system|das tool|der dienst) (?:gerade |eben )?"
    r"(?:zurückgegeben|geliefert|gemeldet)|"
    r"(?:è|questo è) quello che (?:ha restituito|restituisce) (?:l['’]api|il sistema|lo strumento)|"
    r"(?:é|isso é|foi) o que (?:a api|o sistema|a ferramenta) (?:acabou de )?"
    r"(?:devolveu|retornou|devolve|retorna)"
    r")\b[^.!?]{0,40}[.!]?\s*$"
)
# A lead-in to a list or a passage: ends in ":" and says where the facts come from or that
# they follow ("Here is what I found:", "Esto es lo que he encontrado:").
LEAD_IN_RE = re.compile(
    r"(?i)^\W*(?:here(?:'s| is| are)|this is what|that's what|below|"
    r"summary|results|in short|resumen|resultados|en resumen|résumé|résultats|en bref|"
    r"zusammenfassung|ergebnisse|kurz|riepilogo|riassunto|risultati|in breve|resumo|"
    r"aqui está|aqui estão|eis|ecco|"
    r"esto es lo que|aquí (?:está|tienes|tiene)|he aquí|estos son|estas son|"
    r"voici|voilà|ce que j'ai trouvé|"
    r"hier (?:ist|sind)|das habe ich gefunden|folgendes)\b[^:]*:\s*$"
)
# "Según get_invoice:", "According to create_issue,", "D'après restart_service :", "Laut
# python.org:", "Con los datos de create_return:", "Nach den Daten von get_directions:", "From the
# search_products result:". The name is one token (a tool, a site).
SOURCE_LEAD_RE = re.compile(
    r"(?i)^\W*(?:according to|based on|per|from|as per|"
    r"según|de acuerdo con|conforme a|con (?:los )?datos de|"
    r"laut|gemäß|nach (?:den )?(?:daten|angaben) (?:von|aus|des|der)|"
    r"d['’]après|selon|avec les données de|"
    r"secondo|stando a|in base a|segundo|de acordo com|conforme|"
    # "per the response of", "D'après la réponse de", "Laut Antwort von", "Dalla risposta di"
    r"(?:from|according to) the (?:response|result|output) (?:of|from)|"
    r"(?:según|de) la respuesta de|d['’]après la réponse de|selon la réponse de|"
    r"laut (?:der )?antwort (?:von|aus)|aus der antwort (?:von|aus)|"
    r"(?:dalla|secondo la) risposta di|(?:pela|segundo a|da) resposta de|"
    r"aus|da|dalla|de"
    r")\s+(?:the\s+|el\s+|la\s+|den\s+|dem\s+|le\s+)?`?(?P<name>[\w][\w.\-/]*)`?"
    r"(?:\s+(?:result|results|call|tool|output|response|data|lookup))?\s*[:,]\s*"
)
# "The API (get_quote) says:", "L'API (get_quote) indique :": the tool named in brackets
API_LEAD_RE = re.compile(
    r"(?i)^\W*(?:the|l['’]|la|el|die|a|o)\s*(?:api|tool|outil|herramienta|strumento|ferramenta)"
    r"\s*\(\s*`?(?P<name>[\w][\w.\-/]*)`?\s*\)\s*"
    r"(?:says|said|returned|reports|shows|indique|dit|renvoie|dice|devuelve|indica|sagt|meldet|"
    r"liefert|restituisce|diz|retorna|devolve)?\s*:\s*"
)
# A figure or an identifier (camelCase, an acronym, snake_case, an address): a fact, whatever
# surrounds it. Capitalisation alone is no sign of a name here: German capitalises every noun.
FACT_RE = re.compile(r"\d|\b[a-zäöü]+[A-Z]\w*|\b[A-Z]{2,}|\w_\w|@")


# An intro before a colon that holds the facts after it: an acknowledgement ("Done:", "Listo:",
# "Erledigt:") or a lead-in ("Voici ce que j'ai trouvé :", "Folgendes habe ich gefunden:").
INTRO_RE = re.compile(r"^\W*(?P<intro>[^:\n]{1,60}?)\s*:\s*(?=\S)")


def _strip_intro(text: str) -> tuple[str, int]:
    match = INTRO_RE.match(text)
    if not match:
        return text, 0
    intro = match.group("intro")
    said = f"{intro}:"
    if FACT_RE.search(intro) or not (ACK_RE.match(intro) or LEAD_IN_RE.match(said)):
        return text, 0
    return text[match.end() :], match.end()


def strip_source_lead(text: str, names: set[str] | None = None) -> tuple[str, int]:
    """The sentence without a lead-in naming its source, or an acknowledgement or lead-in
    before a colon ("Listo:", "Voici ce que j'ai trouvé :"), and where the rest starts. With
    `names` (the run's tool names), only a lead-in naming one of them, or a site (a dotted
    name), is set aside."""
    total = 0
    while True:
        rest, start = _strip_one(text, names)
        if not start:
            return text, total
        text, total = rest, total + start


def _strip_one(text: str, names: set[str] | None) -> tuple[str, int]:
    rest, start = _strip_intro(text)
    if start and re.search(r"\w", rest):
        return rest, start
    match = SOURCE_LEAD_RE.match(text) or API_LEAD_RE.match(text)
    if not match or not match.group(0).rstrip().endswith((":", ",")):
        return text, 0
    name = match.group("name")
    if names is not None and name not in names and "." not in name:
        return text, 0
    rest = text[match.end() :]
    if not re.search(r"\w", rest):
        return text, 0
    return rest, match.end()


# a markdown table's delimiter row: "|---|:---:|---|"
TABLE_DELIMITER_RE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*")


def is_table_header(body: str, answer: str) -> bool:
    """The text is the header row of a markdown table of the answer: a row of cells the
    answer's next line marks as a header by the table's delimiter row. It names columns; the
    rows under it state the values. A header with a figure in it is not read as one."""
    row = body[body.find("|") :].strip() if "|" in body else ""
    if not row.startswith("|") or row.count("|") < 2 or re.search(r"\d", row):
        return False
    lines = [line.strip() for line in answer.splitlines()]
    return any(
        line.endswith(row) and TABLE_DELIMITER_RE.fullmatch(after)
        for line, after in zip(lines, lines[1:], strict=False)
    )


def is_framing(text: str, names: set[str] | None = None, answer: str = "") -> bool:
    """The sentence states nothing a tool result could support or contradict (`answer`: the
    whole answer, where a table's header row is told by the row under it)."""
    body, _ = strip_source_lead(text.strip(), names)
    body = body.strip()
    if not body:
        return False
    if answer and is_table_header(body, answer):
        return True
    if ACK_RE.match(body) or CHECKED_RE.match(body):
        return True
    if LEAD_IN_RE.match(body) and not re.search(r"\d", body):
        return True
    if SOURCE_SAID_RE.match(body) and not re.search(r"\d|:", body):
        return True  # "the API" is a name of the source, not a fact
    if FACT_RE.search(body):
        return False
    return bool(OFFER_RE.match(body) or HEDGE_RE.search(body))
