"""Which member of a tool's enum a message names, in the languages agents meet (en, es, fr, de,
it, pt).

A member is named by:

1. its own words, case and `_`/`-`/camelCase aside ("IN_TRANSIT" by "in transit");
2. the words of a concept it spells, from `VOCABULARY`: a small list of the enum values APIs
   use most (units, priorities and severities, sort orders, statuses, device modes, travel
   classes, transport modes, sizes, weekdays, months, frequencies, currencies, languages,
   yes/no), each concept with the member spellings APIs give it ("celsius", "c", "metric") and
   its words in each language ("centígrados", "hohe Priorität" reads high, "absteigend"
   desc). Written from general knowledge of the languages, not from any evaluation set, so
   that it holds on requests nobody here has seen;
3. a cognate, as a fallback: a word of five letters or more sharing all but its last three
   letters (and at least five) with a one-word member ("Priorität" for "priority",
   "económica" for "economy").

Words that often serve another role ("high" in "high street", "first" in "first of all",
"on" in "on Monday", "de" the preposition for the language code "de") are *weak*: they name a
member only beside a word of its role, within a few words in the same sentence: the
argument's own name ("priority" for a `priority` argument, also by cognate), or a word of the
concept's group ("Priorität", "clase", "talla"). A cognate is weak too. A member's words
inside a longer phrase of another concept do not name it ("economy" in "premium economy",
"dollars" in "Canadian dollars").

Vocabulary format: a group has `context` words (its role) and concepts; a concept has
`members` (spellings of enum values, compared as identifiers) and per language phrases
separated by commas. In a phrase, `word*` matches any word starting with `word`, and a phrase
starting with `~` is weak. All words are compared lower-case without accents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from stages.common import values

LANGUAGES = ("en", "es", "fr", "de", "it", "pt")
CONTEXT_WINDOW = 4  # words between a weak word and a word of its role
MIN_COGNATE = 5  # letters of a word read as a cognate, at least
COGNATE_PREFIX = 4  # first letters a cognate shares with the member, at least
COGNATE_SHARE = 0.34  # edits a cognate is away from the member, at most, per letter
ENGLISH_ENDINGS = {
    "", "s", "es", "d", "ed", "ing", "er", "ers", "ly", "y", "ies", "ied", "ion", "ions",
    "tion", "tions", "ation", "ations", "al", "ment", "ments", "ity", "ive", "ic", "ical",
    "able", "ance", "ence", "ness", "ful", "less", "ist", "ism", "ize", "ise", "ized", "ised",
}  # fmt: skip
# member words of this length or shorter read by their own spelling only beside their role
# (the language code "de", the size "m", the unit "c")
SHORT_MEMBER = 2

VOCABULARY: dict[str, dict[str, Any]] = {
    "temperature unit": {
        "context": "unit*, temperatur*, temp, degree*, grado*, degre*, grad, gradi, graus, "
        "measur*, medid*, mesur*, einheit*, unidad*, unite*, unita*, unidade*, misur*, weather, "
        "tiempo, clima, meteo*, wetter",
        "celsius": {
            "members": "celsius, c, centigrade, degc, degreesc, metric, si",
            "en": "celsius, centigrade, ~c",
            "es": "centigrad*, celsius",
            "fr": "centigrad*, celsius",
            "de": "celsius",
            "it": "centigrad*, celsius",
            "pt": "centigrad*, celsius",
        },
        "fahrenheit": {
            "members": "fahrenheit, f, degf, degreesf, imperial, us",
            "en": "fahrenheit, farenheit, ~f",
            "es": "fahrenheit",
            "fr": "fahrenheit",
            "de": "fahrenheit",
            "it": "fahrenheit",
            "pt": "fahrenheit",
        },
        "kelvin": {
            "members": "kelvin, k",
            "en": "kelvin, ~k",
            "es": "kelvin",
            "fr": "kelvin",
            "de": "kelvin",
            "it": "kelvin",
            "pt": "kelvin",
        },
    },
    "unit system": {
        "context": "unit*, system*, sistema*, systeme*, einheit*, unidad*, unite*, unita*, "
        "unidade*, measur*, medid*, mesur*, misur*, mass*",
        "metric": {
            "members": "metric, si, metric_system",
            "en": "metric",
            "es": "metric*",
            "fr": "metrique*",
            "de": "metrisch*",
            "it": "metric*",
            "pt": "metric*",
        },
        "imperial": {
            "members": "imperial, us, us_customary, imperial_system",
            "en": "imperial, ~us customary",
            "es": "imperial*, anglosajon*",
            "fr": "imperial*, anglo saxon*",
            "de": "imperial*, angloamerikanisch*",
            "it": "imperial*, anglosassone",
            "pt": "imperia*",
        },
    },
    "distance unit": {
        "context": "unit*, distanc*, distanz*, entfernung*, lunghezz*, longitud*, longueur*, "
        "comprimento*, radius, radio, raggio, rayon, umkreis, raio",
        "km": {
            "members": "km, kms, kilometer, kilometers, kilometre, kilometres, metric",
            "en": "kilometer*, kilometre*, km, kms",
            "es": "kilometro*, km",
            "fr": "kilometre*, km",
            "de": "kilometer*, km",
            "it": "chilometr*, km",
            "pt": "quilometro*, km",
        },
        "miles": {
            "members": "mi, mile, miles, imperial",
            "en": "mile, miles, mi",
            "es": "milla, millas",
            "fr": "~mile, ~miles",
            "de": "meile, meilen",
            "it": "miglio, miglia",
            "pt": "milha, milhas",
        },
        "meters": {
            "members": "m, meter, meters, metre, metres",
            "en": "meter, meters, metre, metres",
            "es": "metro, metros",
            "fr": "metre, metres",
            "de": "meter",
            "it": "metro, metri",
            "pt": "metro, metros",
        },
        "feet": {
            "members": "ft, foot, feet",
            "en": "feet, foot, ft",
            "es": "~pies",
            "fr": "pied, pieds",
            "de": "~fuss",
            "it": "~piedi",
            "pt": "~pes",
        },
    },
    "weight unit": {
        "context": "unit*, weight, gewicht, peso, poids, weigh*",
        "kg": {
            "members": "kg, kgs, kilogram, kilograms, kilogramme, kilogrammes",
            "en": "kilogram*, kilo, kilos, kg",
            "es": "kilogramo*, kilo, kilos, kg",
            "fr": "kilogramme*, kilo, kilos, kg",
            "de": "kilogramm*, kilo, kg",
            "it": "chilogramm*, chilo, chili, kg",
            "pt": "quilograma*, quilo, quilos, kg",
        },
        "lb": {
            "members": "lb, lbs, pound, pounds",
            "en": "pound, pounds, lb, lbs",
            "es": "libra, libras",
            "fr": "~livre, ~livres",
            "de": "~pfund",
            "it": "libbra, libbre",
            "pt": "~libra, ~libras",
        },
    },
    "priority": {
        "context": "priori*, prio, severit*, severe, urgen*, importan*, level*, gravedad, "
        "severidad, gravite, dringlich*, schwere*, schweregrad*, wichtig*, gravita, gravidade, "
        "nivel*, niveau*, stufe*, livello*",
        "lowest": {
            "members": "lowest, very_low, verylow, trivial",
            "en": "lowest, ~very low, trivial",
            "es": "~muy baja, ~muy bajo, ~minima, ~minimo, trivial",
            "fr": "~tres basse, ~tres bas, ~minimale, trivial*",
            "de": "~sehr niedrig*, ~niedrigst*, trivial*",
            "it": "~molto bassa, ~molto basso, ~minima, banale",
            "pt": "~muito baixa, ~muito baixo, ~minima, trivial",
        },
        "low": {
            "members": "low, lo, minor, p4, sev4, priority4, prio4",
            "en": "~low, ~minor, ~not urgent, ~not important, ~p4",
            "es": "~baja, ~bajo, ~menor, ~poco urgente, ~no urgente",
            "fr": "~basse, ~bas, ~faible, ~mineur*, ~pas urgent*, ~peu urgent*",
            "de": "~niedrig*, ~gering*, ~nicht dringend*, ~unwichtig*",
            "it": "~bassa, ~basso, ~minore, ~non urgente",
            "pt": "~baixa, ~baixo, ~menor, ~nao urgente",
        },
        "medium": {
            "members": "medium, med, mid, moderate, normal, p3, sev3, priority3, prio3",
            "en": "~medium, ~moderate, ~normal, ~mid, ~average, ~p3",
            "es": "~media, ~medio, ~mediana, ~mediano, ~moderada, ~moderado, ~normal",
            "fr": "~moyenne, ~moyen, ~moderee, ~modere, ~normale, ~normal",
            "de": "~mittel*, ~mittler*, ~maessig*, ~massig*, ~normal*",
            "it": "~media, ~medio, ~moderata, ~moderato, ~normale",
            "pt": "~media, ~medio, ~moderada, ~moderado, ~normal",
        },
        "high": {
            "members": "high, hi, major, important, p2, sev2, priority2, prio2",
            "en": "~high, ~major, ~important, ~p2",
            "es": "~alta, ~alto, ~elevada, ~elevado, ~mayor, ~importante",
            "fr": "~haute, ~haut, ~elevee, ~eleve, ~majeur*, ~important*",
            "de": "~hoch, ~hohe, ~hoher, ~hohen, ~hohes, ~wichtig*",
            "it": "~alta, ~alto, ~elevata, ~elevato, ~maggiore, ~importante",
            "pt": "~alta, ~alto, ~elevada, ~elevado, ~maior, ~importante",
        },
        "highest": {
            "members": "highest, very_high, veryhigh, blocker",
            "en": "highest, ~very high, blocker, blocking",
            "es": "~muy alta, ~muy alto, ~maxima, ~maximo, bloqueante",
            "fr": "~tres haute, ~tres haut, ~maximale, bloquant*",
            "de": "~sehr hoch*, ~sehr hohe*, hochst*, ~maximal*, blockier*",
            "it": "~molto alta, ~molto alto, ~massima, bloccante",
            "pt": "~muito alta, ~muito alto, ~maxima, bloqueante",
        },
        "urgent": {
            "members": "urgent, immediate, asap, emergency",
            "en": "urgent*, emergency, asap",
            "es": "urgente*, urgencia, emergencia",
            "fr": "urgent*, urgence",
            "de": "dringend*, notfall",
            "it": "urgent*, emergenza",
            "pt": "urgente*, emergencia",
        },
        "critical": {
            "members": "critical, crit, p1, sev1, priority1, prio1, fatal",
            "en": "~critical, ~p1, ~sev1",
            "es": "~critica, ~critico",
            "fr": "~critique*",
            "de": "~kritisch*",
            "it": "~critica, ~critico",
            "pt": "~critica, ~critico",
        },
    },
    "log level": {
        "context": "level*, log*, nivel*, niveau*, stufe*, livello*, severit*, message*, "
        "mensaje*, meldung*, messaggi*, mensage*",
        "debug": {
            "members": "debug, trace, verbose",
            "en": "debug*, ~verbose",
            "es": "depuracion, debug",
            "fr": "debogage, debug",
            "de": "debug*",
            "it": "debug",
            "pt": "depuracao, debug",
        },
        "info": {
            "members": "info, information, informational, notice",
            "en": "~info, ~informational",
            "es": "~informativo*, ~informacion",
            "fr": "~informati*",
            "de": "~informativ*",
            "it": "~informativ*",
            "pt": "~informativ*",
        },
        "warning": {
            "members": "warning, warn",
            "en": "warning*, warn",
            "es": "advertencia*, aviso*",
            "fr": "avertissement*",
            "de": "warnung*",
            "it": "avvis*, avvertiment*",
            "pt": "aviso*, advertencia*",
        },
        "error": {
            "members": "error, err",
            "en": "~error*",
            "es": "~error*",
            "fr": "~erreur*",
            "de": "~fehler*",
            "it": "~errore, ~errori",
            "pt": "~erro, ~erros",
        },
    },
    "sort order": {
        "context": "sort*, order*, orden*, ordre*, tri, trier, trie*, reihenfolge*, "
        "ordin*, ordem*, classifi*, list*, result*, resultad*, resultat*, ergebnis*, risultat*",
        "asc": {
            "members": "asc, ascending, ascend, increasing, up",
            "en": "ascending, increasing, ~low to high, ~lowest first, ~smallest first, "
            "~a to z, ~a z",
            "es": "ascendente*, creciente*, ~de menor a mayor, ~de la a a la z",
            "fr": "croissant*, ascendant*, ~du plus petit au plus grand, ~de a a z",
            "de": "aufsteigend*, ~von a bis z",
            "it": "crescente*, ascendente*, ~dal piu basso al piu alto",
            "pt": "crescente*, ascendente*, ~do menor para o maior, ~do menor ao maior",
        },
        "desc": {
            "members": "desc, descending, descend, decreasing, down",
            "en": "descending, decreasing, ~high to low, ~highest first, ~largest first, ~z to a",
            "es": "descendente*, decreciente*, ~de mayor a menor",
            "fr": "decroissant*, descendant*, ~du plus grand au plus petit, ~de z a a",
            "de": "absteigend*, ~von z bis a",
            "it": "decrescente*, discendente*, ~dal piu alto al piu basso",
            "pt": "decrescente*, descendente*, ~do maior para o menor, ~do maior ao menor",
        },
        "newest": {
            "members": "newest, latest, recent, most_recent, newest_first, latest_first, new, "
            "date_desc",
            "en": "newest, latest, most recent, ~recent*, newer first",
            "es": "~mas reciente*, ~mas nuevo*, ~mas nueva*, ~ultimo*, ~ultima*, ~reciente*",
            "fr": "~plus recent*, ~recent*, ~dernier*, ~derniere*",
            "de": "neuest*, aktuellst*, juengst*, jungst*, ~letzte*",
            "it": "~piu recent*, ~piu nuov*, ~recent*, ~ultim*",
            "pt": "~mais recente*, ~mais novo*, ~mais nova*, ~recente*, ~ultimo*, ~ultima*",
        },
        "oldest": {
            "members": "oldest, earliest, oldest_first, old, date_asc",
            "en": "oldest, earliest, ~older first",
            "es": "~mas antiguo*, ~mas antigua*, ~mas viejo*, ~mas vieja*",
            "fr": "~plus ancien*, ~plus vieux, ~plus vieille*",
            "de": "aelteste*, alteste*, fruehest*, fruhest*",
            "it": "~piu vecch*, ~piu antic*, ~meno recent*",
            "pt": "~mais antigo*, ~mais antiga*, ~mais velho*, ~mais velha*",
        },
        "relevance": {
            "members": "relevance, relevant, best_match, most_relevant",
            "en": "relevance, ~relevant, ~best match",
            "es": "relevancia, ~relevante*",
            "fr": "pertinence, ~pertinent*",
            "de": "relevanz, ~relevant*",
            "it": "rilevanza, ~rilevant*, pertinenza",
            "pt": "relevancia, ~relevante*",
        },
        "popularity": {
            "members": "popularity, popular, most_popular",
            "en": "popularity, ~popular, ~most popular",
            "es": "popularidad, ~popular*",
            "fr": "popularite, ~populaire*",
            "de": "beliebtheit, ~beliebt*, popularitat, popularitaet",
            "it": "popolarita, ~popolar*",
            "pt": "popularidade, ~popular*",
        },
        "rating": {
            "members": "rating, ratings, rated, top_rated, best_rated, stars",
            "en": "~rating*, ~rated, ~stars, ~reviews",
            "es": "valoracion*, calificacion*, puntuacion*, ~estrellas",
            "fr": "~note, ~notes, evaluation*, ~etoiles",
            "de": "bewertung*, ~sterne*",
            "it": "valutazion*, ~stelle",
            "pt": "avaliac*, classificac*, ~estrelas",
        },
        "review count": {
            "members": "review_count, reviews_count, num_reviews, most_reviewed, reviews",
            "en": "most reviews, most reviewed, number of reviews, review count",
            "es": "mas resenas, mas opiniones, mas valoraciones, numero de resenas",
            "fr": "plus d'avis, le plus d'avis, nombre d'avis, plus de commentaires",
            "de": "meisten bewertungen, meisten rezensionen, anzahl der bewertungen",
            "it": "piu recensioni, numero di recensioni, piu valutazioni",
            "pt": "mais avaliacoes, mais comentarios, numero de avaliacoes",
        },
        "price": {
            "members": "price, cost, cheapest",
            "en": "~price*, ~cheapest, ~cost",
            "es": "~precio*, ~mas barato*",
            "fr": "~prix, ~moins cher*",
            "de": "~preis*, ~billigst*, ~guenstigst*, ~gunstigst*",
            "it": "~prezzo, ~prezzi, ~piu economic*",
            "pt": "~preco*, ~mais barat*",
        },
    },
    "status": {
        "context": "status*, state*, estado*, etat*, statut*, zustand*, stato*, situac*",
        "open": {
            "members": "open, opened, new, active_open",
            "en": "~open, ~opened, ~unresolved",
            "es": "~abierto*, ~abierta*, ~sin resolver",
            "fr": "~ouvert*, ~non resolu*",
            "de": "~offen*, ~geoffnet*, ~geoeffnet*, ~ungelost*, ~ungeloest*",
            "it": "~aperto, ~aperta, ~aperti, ~aperte, ~irrisolt*",
            "pt": "~aberto*, ~aberta*, ~nao resolvid*",
        },
        "pending": {
            "members": "pending, waiting, on_hold, onhold, awaiting, queued",
            "en": "pending, ~waiting, ~on hold, ~awaiting",
            "es": "pendiente*, ~en espera",
            "fr": "~en attente, ~en suspens",
            "de": "ausstehend*, ~wartend*, ~in warteschlange",
            "it": "~in attesa, ~in sospeso, pendent*",
            "pt": "pendente*, ~em espera, ~aguardando",
        },
        "in_progress": {
            "members": "in_progress, inprogress, in-progress, processing, ongoing, started, wip",
            "en": "~in progress, ~ongoing, ~being processed, ~processing",
            "es": "~en curso, ~en progreso, ~en proceso",
            "fr": "~en cours",
            "de": "~in bearbeitung, ~in arbeit, ~laufend*",
            "it": "~in corso, ~in lavorazione",
            "pt": "~em andamento, ~em curso, ~em progresso",
        },
        "resolved": {
            "members": "resolved, solved, fixed",
            "en": "~resolved, ~solved, ~fixed",
            "es": "~resuelto*, ~resuelta*, ~solucionad*",
            "fr": "~resolu*",
            "de": "~gelost*, ~geloest*, ~behoben*",
            "it": "~risolt*",
            "pt": "~resolvid*, ~solucionad*",
        },
        "closed": {
            "members": "closed, close, done_closed, archived",
            "en": "~closed",
            "es": "~cerrado*, ~cerrada*",
            "fr": "~ferme, ~fermee, ~fermes, ~fermees, ~clos, ~cloture*",
            "de": "~geschlossen*, ~abgeschlossen*",
            "it": "~chiuso, ~chiusa, ~chiusi, ~chiuse",
            "pt": "~fechado*, ~fechada*, ~encerrad*",
        },
        "completed": {
            "members": "completed, complete, done, finished, fulfilled",
            "en": "~completed, ~complete, ~done, ~finished",
            "es": "~completad*, ~terminad*, ~finalizad*, ~hecho*",
            "fr": "~termine*, ~acheve*, ~fini*",
            "de": "~erledigt*, ~fertig*, ~beendet*, ~abgeschlossen*",
            "it": "~completat*, ~terminat*, ~finit*",
            "pt": "~concluid*, ~completad*, ~terminad*, ~finalizad*",
        },
        "cancelled": {
            "members": "cancelled, canceled, cancel, void, voided, aborted",
            "en": "cancel*",
            "es": "cancelad*, anulad*",
            "fr": "annule*",
            "de": "storniert*, abgesagt*, annulliert*",
            "it": "annullat*, cancellat*",
            "pt": "cancelad*, anulad*",
        },
        "active": {
            "members": "active, enabled_active, live",
            "en": "~active",
            "es": "~activo*, ~activa*",
            "fr": "~actif*, ~active*",
            "de": "~aktiv*",
            "it": "~attivo, ~attiva, ~attivi, ~attive",
            "pt": "~ativo*, ~ativa*",
        },
        "inactive": {
            "members": "inactive, suspended, disabled_inactive",
            "en": "~inactive, ~suspended",
            "es": "~inactivo*, ~inactiva*, ~suspendid*",
            "fr": "~inactif*, ~inactive*, ~suspendu*",
            "de": "~inaktiv*, ~gesperrt*",
            "it": "~inattiv*, ~sospes*",
            "pt": "~inativo*, ~inativa*, ~suspens*",
        },
        "draft": {
            "members": "draft, drafts",
            "en": "~draft*",
            "es": "~borrador*",
            "fr": "~brouillon*",
            "de": "~entwurf*, ~entwurfe*, ~entwuerfe*",
            "it": "~bozza, ~bozze",
            "pt": "~rascunho*",
        },
        "paid": {
            "members": "paid, settled",
            "en": "~paid",
            "es": "~pagad*",
            "fr": "~paye*, ~payee*, ~regle*",
            "de": "~bezahlt*",
            "it": "~pagat*",
            "pt": "~pag*",
        },
        "unpaid": {
            "members": "unpaid, outstanding, overdue, due",
            "en": "~unpaid, ~outstanding, ~overdue",
            "es": "~impagad*, ~no pagad*, ~vencid*, ~sin pagar",
            "fr": "~impaye*, ~non paye*, ~en retard",
            "de": "~unbezahlt*, ~offen*, ~uberfallig*, ~ueberfaellig*",
            "it": "~non pagat*, ~insolut*, ~scadut*",
            "pt": "~nao pag*, ~vencid*, ~em atraso",
        },
        "shipped": {
            "members": "shipped, dispatched, sent, in_transit",
            "en": "~shipped, ~dispatched, ~in transit",
            "es": "~enviad*, ~despachad*, ~en transito",
            "fr": "~expedie*, ~envoye*, ~en transit",
            "de": "~versandt*, ~versendet*, ~verschickt*, ~unterwegs",
            "it": "~spedit*, ~inviat*, ~in transito",
            "pt": "~enviad*, ~despachad*, ~em transito",
        },
        "delivered": {
            "members": "delivered, received",
            "en": "~delivered",
            "es": "~entregad*, ~recibid*",
            "fr": "~livre, ~livree, ~livres, ~livrees, ~recu*",
            "de": "~zugestellt*, ~geliefert*, ~erhalten*",
            "it": "~consegnat*, ~ricevut*",
            "pt": "~entregue*, ~recebid*",
        },
        "approved": {
            "members": "approved, accepted",
            "en": "~approved, ~accepted",
            "es": "~aprobad*, ~aceptad*",
            "fr": "~approuve*, ~accepte*",
            "de": "~genehmigt*, ~akzeptiert*, ~angenommen*",
            "it": "~approvat*, ~accettat*",
            "pt": "~aprovad*, ~aceit*",
        },
        "rejected": {
            "members": "rejected, declined, denied",
            "en": "~rejected, ~declined, ~denied",
            "es": "~rechazad*, ~denegad*",
            "fr": "~rejete*, ~refuse*",
            "de": "~abgelehnt*",
            "it": "~rifiutat*, ~respint*",
            "pt": "~rejeitad*, ~recusad*",
        },
    },
    "access role": {
        "context": "role*, rol, rolle*, ruolo, papel, access*, acces*, acceso, accesso, acesso, "
        "zugriff*, permiss*, permis*, permes*, berechtig*, droit*, derecho*, share*, sharing, "
        "compart*, partag*, teil*, freigeb*, condivid*",
        "reader": {
            "members": "reader, viewer, view, read, readonly, read_only, view_only",
            "en": "read only, read-only, view only, view-only, ~view, ~read, ~see",
            "es": "solo lectura, solo para ver, ~lectura, ~ver, ~leer",
            "fr": "lecture seule, ~lecture, ~lire, ~voir, ~consulter",
            "de": "nur lesen, nur ansehen, lesezugriff, ~lesen, ~ansehen, ~anzeigen",
            "it": "sola lettura, solo lettura, solo per vedere, ~lettura, ~leggere, ~vedere",
            "pt": "somente leitura, so leitura, so para ver, apenas ver, ~leitura, ~ver",
        },
        "commenter": {
            "members": "commenter, comment, comments, commentator",
            "en": "comment*",
            "es": "coment*",
            "fr": "comment*",
            "de": "kommentier*, kommentar*",
            "it": "comment*",
            "pt": "coment*",
        },
        "writer": {
            "members": "writer, editor, edit, write, read_write, readwrite, contributor",
            "en": "~edit, ~editing, ~editor, ~write, ~writer",
            "es": "~editar, ~edicion, ~editor*, ~escribir",
            "fr": "~editer, ~edition, ~editeur*, ~ecrire",
            "de": "~bearbeiten, ~schreiben, ~editieren",
            "it": "~modificare, ~scrivere, ~editor*",
            "pt": "~editar, ~edicao, ~editor*, ~escrever",
        },
        "owner": {
            "members": "owner, organizer",
            "en": "~owner*, ~ownership",
            "es": "~propietari*, ~duen*",
            "fr": "~proprietaire*",
            "de": "~eigentumer*, ~besitzer*, ~inhaber*",
            "it": "~proprietari*",
            "pt": "~proprietari*, ~dono",
        },
    },
    "traffic direction": {
        "context": "traffic, trafico, trafic, verkehr*, traffico, trafego, direction*, richtung, "
        "direccion, sens, direzione, direcao, firewall*, rule*, regel*, regla*, regle*, "
        "regola*, port*, connect*, verbind*, allow*, erlaub*, permit*, autoris*, consent*",
        "ingress": {
            "members": "ingress, inbound, incoming, in",
            "en": "inbound, incoming, ingress",
            "es": "entrante*, ~de entrada",
            "fr": "entrant*",
            "de": "eingehend*",
            "it": "in entrata, ~entrant*",
            "pt": "~de entrada, ~entrante*",
        },
        "egress": {
            "members": "egress, outbound, outgoing, out",
            "en": "outbound, outgoing, egress",
            "es": "saliente*, ~de salida",
            "fr": "sortant*",
            "de": "ausgehend*",
            "it": "in uscita, ~uscent*",
            "pt": "~de saida, ~sainte*",
        },
    },
    "collection method": {
        "context": "charg*, bill*, collect*, cobr*, cobran*, factur*, invoice*, rechnung*, "
        "fattur*, abbuch*, einzug*, prelev*, addebit*, debit*, card*, karte*, tarjeta*, "
        "carte*, carta*, cartao*, belast*, cargar*, cobrar*, payer*, pagar*, pagare*",
        "charge_automatically": {
            "members": "charge_automatically, automatic, auto, autopay",
            "en": "~automatic*, autopay, auto-pay",
            "es": "~automatic*",
            "fr": "~automatique*",
            "de": "~automatisch*",
            "it": "~automatic*",
            "pt": "~automatic*",
        },
        "send_invoice": {
            "members": "send_invoice, invoice, manual",
            "en": "~invoice*, ~bill them",
            "es": "~factura*",
            "fr": "~factur*",
            "de": "~rechnung*",
            "it": "~fattur*",
            "pt": "~fatura*",
        },
    },
    "device mode": {
        "context": "mode*, modo*, modus, betriebsart*, setting*, thermostat*, termostat*, "
        "hvac, climat*, klima*, aircon*",
        "heat": {
            "members": "heat, heating, warm, heat_mode",
            "en": "heating, ~heat, ~warm",
            "es": "calefaccion, calentar, ~calor",
            "fr": "chauffage, chauffer, ~chaud",
            "de": "heiz*, ~warm*",
            "it": "riscaldament*, riscaldare, ~caldo",
            "pt": "aquecimento, aquecer, ~calor",
        },
        "cool": {
            "members": "cool, cooling, cold, ac, cool_mode",
            "en": "cooling, ~cool, ~cold, air conditioning",
            "es": "refrigeracion, enfriar, ~frio, aire acondicionado",
            "fr": "refroidi*, climatisation, ~froid",
            "de": "kuhl*, kuehl*, ~kalt*",
            "it": "raffredd*, ~freddo, aria condizionata",
            "pt": "refrigeracao, arrefec*, resfria*, ~frio, ar condicionado",
        },
        "auto": {
            "members": "auto, automatic, automatically, heat_cool, heatcool",
            "en": "automatic*, ~auto",
            "es": "automatic*, ~auto",
            "fr": "automati*, ~auto",
            "de": "automati*, ~auto",
            "it": "automatic*, ~auto",
            "pt": "automatic*, ~auto",
        },
        "eco": {
            "members": "eco, economy_mode, energy_saving, energysaving, eco_mode, away",
            "en": "~eco, energy saving, energy saver",
            "es": "~eco, ~ahorro, ahorro de energia, ahorro energetico",
            "fr": "~eco, economie d energie, economies d energie",
            "de": "~eco, ~spar*, energiespar*",
            "it": "~eco, risparmio energetico, ~risparmio",
            "pt": "~eco, economia de energia, ~poupanca",
        },
        "fan": {
            "members": "fan, fan_only, fanonly, ventilation",
            "en": "~fan, ~fan only, ventilat*",
            "es": "ventila*",
            "fr": "ventila*",
            "de": "luft*, lueft*, ventilat*, ~gebl*",
            "it": "ventila*",
            "pt": "ventila*",
        },
        "dry": {
            "members": "dry, dehumidify, dehumidification",
            "en": "~dry, dehumidif*",
            "es": "~seco, deshumidif*",
            "fr": "~sec, deshumidif*",
            "de": "~trocken*, entfeucht*",
            "it": "~secco, deumidif*",
            "pt": "~seco, desumidif*",
        },
    },
    "switch": {
        "context": "turn*, switch*, power*, toggle*, state*, light*, lamp*, device*, "
        "luz, luces, lampara*, lumiere*, lampe*, licht*, luce, luci, luzes, estado*, etat*, "
        "stato*, zustand*",
        "on": {
            "members": "on, turn_on, turnon, switch_on, power_on, poweron",
            "en": "~on, ~switched on, ~turned on",
            "es": "encend*, ~prender, ~prende, ~prendid*",
            "fr": "allum*",
            "de": "einschalt*, anschalt*, eingeschaltet, angeschaltet, ~an, ~ein",
            "it": "accend*, ~acces*",
            "pt": "~ligad*, ~ligar, ~liga",
        },
        "off": {
            "members": "off, turn_off, turnoff, switch_off, power_off, poweroff",
            "en": "~off, ~switched off, ~turned off",
            "es": "apag*",
            "fr": "eteign*, eteind*, eteint*",
            "de": "ausschalt*, ausgeschaltet, ~aus",
            "it": "speg*, spent*",
            "pt": "deslig*",
        },
    },
    "toggle": {
        "context": "setting*, option*, feature*, function*, configur*, ajuste*, opcion*, "
        "funcion*, parametre*, einstellung*, option*, funktion*, impostazion*, opzion*, "
        "funzion*, configurac*, opc*",
        "enabled": {
            "members": "enabled, enable, activated, activate",
            "en": "enable*, activat*, ~turn on",
            "es": "habilit*, activ*",
            "fr": "activ*",
            "de": "aktivier*",
            "it": "abilit*, attiv*",
            "pt": "habilit*, ativ*",
        },
        "disabled": {
            "members": "disabled, disable, deactivated, deactivate",
            "en": "disable*, deactivat*, ~turn off",
            "es": "deshabilit*, desactiv*, inhabilit*",
            "fr": "desactiv*",
            "de": "deaktivier*",
            "it": "disabilit*, disattiv*",
            "pt": "desabilit*, desativ*",
        },
    },
    "yes or no": {
        "context": "answer*, respuesta*, reponse*, antwort*, rispost*, resposta*, confirm*, "
        "bestatig*, bestaetig*, conferm*",
        "yes": {
            "members": "yes, y, si, oui, ja, sim",
            "en": "~yes",
            "es": "~si",
            "fr": "~oui",
            "de": "~ja",
            "it": "~si",
            "pt": "~sim",
        },
        "no": {
            "members": "no, n, non, nein, nao",
            "en": "~no",
            "es": "~no",
            "fr": "~non",
            "de": "~nein",
            "it": "~no",
            "pt": "~nao",
        },
    },
    "travel class": {
        "context": "class*, cabin*, seat*, clase*, cabina*, asiento*, classe*, cabine*, "
        "siege*, klasse*, kabine*, sitz*, posto*, assento*",
        "economy": {
            "members": "economy, eco_class, coach, economy_class",
            "en": "econom*, ~coach",
            "es": "economic*, ~turista",
            "fr": "economi*, ~eco",
            "de": "econom*, okonom*, oekonom*",
            "it": "economic*",
            "pt": "economic*",
        },
        "premium_economy": {
            "members": "premium_economy, premiumeconomy, premium",
            "en": "premium economy, ~premium",
            "es": "~premium, turista superior, economica premium",
            "fr": "premium economy, economie premium, ~premium",
            "de": "premium economy, ~premium",
            "it": "premium economy, economy premium, ~premium",
            "pt": "economica premium, ~premium",
        },
        "business": {
            "members": "business, business_class",
            "en": "~business, business class",
            "es": "~ejecutiva, ~business, ~negocios, clase ejecutiva, clase business",
            "fr": "~affaires, ~business, classe affaires",
            "de": "~business, businessklasse, business klasse",
            "it": "~business, classe business",
            "pt": "~executiva, ~business, classe executiva",
        },
        "first": {
            "members": "first, first_class, firstclass",
            "en": "~first, first class",
            "es": "~primera, primera clase",
            "fr": "~premiere, premiere classe",
            "de": "~erste, erste klasse, ersten klasse",
            "it": "~prima, prima classe",
            "pt": "~primeira, primeira classe",
        },
    },
    "transport mode": {
        "context": "mode*, modo*, modus, travel*, transport*, verkehrsmittel*, mezz*",
        "driving": {
            "members": "driving, drive, car, auto, automobile, driving_car",
            "en": "driving, drive, ~car, by car",
            "es": "~coche, ~carro, en coche, en carro, en auto, conducir, conduciendo, manejar, "
            "manejando",
            "fr": "~voiture, en voiture, conduire, en auto",
            "de": "~auto, mit dem auto, ~pkw, autofahrt",
            "it": "~macchina, in macchina, in auto, guidare, guidando",
            "pt": "~carro, de carro, dirigir, conduzir, dirigindo",
        },
        "walking": {
            "members": "walking, walk, foot, on_foot, pedestrian, foot_walking",
            "en": "walking, ~walk, on foot, ~by foot",
            "es": "a pie, caminar, caminando, andando",
            "fr": "a pied, marcher, ~marche",
            "de": "zu fuss, ~laufen, ~gehen, fussweg, fussganger*, fussgaenger*",
            "it": "a piedi, camminare, camminando",
            "pt": "a pe, caminhar, caminhando, ~andando",
        },
        "bicycling": {
            "members": "bicycling, bicycle, bike, cycling, cycle, cycling_regular",
            "en": "bicycl*, ~bike, biking, cycling, by bike",
            "es": "bicicleta*, ~bici",
            "fr": "velo, velos, bicyclette*, a velo",
            "de": "fahrrad*, radfahr*, mit dem rad, ~rad",
            "it": "bicicletta*, ~bici",
            "pt": "bicicleta*, de bike",
        },
        "transit": {
            "members": "transit, public_transport, publictransport, public_transit, bus, train",
            "en": "transit, public transport*, public transit, ~bus, ~train, ~subway, ~metro, "
            "by bus, by train, by subway, by metro",
            "es": "transporte publico, ~autobus, ~tren, ~metro, ~colectivo, en tren, en autobus, "
            "en bus, en metro",
            "fr": "transport* en commun, transport* public*, ~bus, ~train, ~metro, en train, "
            "en bus, en metro",
            "de": "opnv, oepnv, offentlich*, oeffentlich*, ~bus, ~bahn, ~zug, ~u bahn, "
            "mit dem zug, mit der bahn, mit dem bus",
            "it": "trasporto pubblico, trasporti pubblici, mezzi pubblici, ~autobus, ~treno, "
            "~metro",
            "pt": "transporte publico, transportes publicos, ~onibus, ~trem, ~comboio, ~metro",
        },
    },
    "size": {
        "context": "size*, talla*, tamano*, taille*, grosse*, groesse*, taglia*, tamanho*, "
        "dimension*, format*",
        "small": {
            "members": "small, s, sm",
            "en": "~small, ~s",
            "es": "~pequeno*, ~pequena*, ~chico*, ~chica*, ~s",
            "fr": "~petit*, ~s",
            "de": "~klein*, ~s",
            "it": "~piccol*, ~s",
            "pt": "~pequeno*, ~pequena*, ~s",
        },
        "medium": {
            "members": "medium, m, md, med",
            "en": "~medium, ~m",
            "es": "~mediano*, ~mediana*, ~m",
            "fr": "~moyen*, ~m",
            "de": "~mittel*, ~m",
            "it": "~medio, ~media, ~m",
            "pt": "~medio*, ~media*, ~m",
        },
        "large": {
            "members": "large, l, lg, big",
            "en": "~large, ~big, ~l",
            "es": "~grande*, ~l",
            "fr": "~grand*, ~l",
            "de": "~gross*, ~l",
            "it": "~grande, ~grandi, ~l",
            "pt": "~grande*, ~l",
        },
        "xl": {
            "members": "xl, extra_large, extralarge",
            "en": "extra large, ~xl",
            "es": "extra grande, ~xl",
            "fr": "tres grand*, extra large, ~xl",
            "de": "extra gross*, ~xl",
            "it": "extra large, ~xl",
            "pt": "extra grande, ~xl",
        },
    },
    "frequency": {
        "context": "frequen*, recurr*, repeat*, interval*, schedul*, recurren*, repetic*, "
        "intervalo*, periodic*, haufig*, haeufig*, wiederhol*, intervall*, rhythm*, ripet*, "
        "cadenc*, report*, backup*, summary*, resumen*, informe*, rapport*, bericht*, "
        "riepilog*, relatorio*",
        "hourly": {
            "members": "hourly, every_hour, hour",
            "en": "hourly, every hour, each hour",
            "es": "cada hora, por hora",
            "fr": "chaque heure, toutes les heures, horaire",
            "de": "stundlich*, stuendlich*, jede stunde",
            "it": "ogni ora, orari*",
            "pt": "a cada hora, de hora em hora",
        },
        "daily": {
            "members": "daily, day, every_day, everyday, days",
            "en": "daily, every day, each day",
            "es": "diari*, cada dia, todos los dias",
            "fr": "quotidien*, chaque jour, tous les jours, journalier*",
            "de": "taglich*, taeglich*, jeden tag",
            "it": "giornalier*, quotidian*, ogni giorno, tutti i giorni",
            "pt": "diari*, todos os dias, cada dia",
        },
        "weekly": {
            "members": "weekly, week, every_week, weeks",
            "en": "weekly, every week, each week",
            "es": "semanal*, cada semana, todas las semanas",
            "fr": "hebdomadaire*, chaque semaine, toutes les semaines",
            "de": "wochentlich*, woechentlich*, jede woche",
            "it": "settimanal*, ogni settimana",
            "pt": "semanal*, toda semana, todas as semanas, cada semana",
        },
        "monthly": {
            "members": "monthly, month, every_month, months",
            "en": "monthly, every month, each month",
            "es": "mensual*, cada mes, todos los meses",
            "fr": "mensuel*, chaque mois, tous les mois",
            "de": "monatlich*, jeden monat",
            "it": "mensil*, ogni mese",
            "pt": "mensal*, todo mes, todos os meses, cada mes",
        },
        "yearly": {
            "members": "yearly, annual, annually, year, every_year, years",
            "en": "yearly, annual*, every year, each year",
            "es": "anual*, cada ano, todos los anos",
            "fr": "annuel*, chaque annee, tous les ans",
            "de": "jahrlich*, jaehrlich*, jedes jahr",
            "it": "annual*, ogni anno",
            "pt": "anual*, todo ano, todos os anos, cada ano",
        },
    },
    "weekday": {
        "context": "day*, weekday*, dia, dias, jour*, tag, tage, wochentag*, giorn*, feira",
        "monday": {
            "members": "monday, mon, mo, 1_monday",
            "en": "monday*",
            "es": "lunes",
            "fr": "lundi*",
            "de": "montag*",
            "it": "lunedi",
            "pt": "segunda feira, ~segunda",
        },
        "tuesday": {
            "members": "tuesday, tue, tues, tu",
            "en": "tuesday*",
            "es": "martes",
            "fr": "mardi*",
            "de": "dienstag*",
            "it": "martedi",
            "pt": "terca feira, terca",
        },
        "wednesday": {
            "members": "wednesday, wed, we",
            "en": "wednesday*",
            "es": "miercoles",
            "fr": "mercredi*",
            "de": "mittwoch*",
            "it": "mercoledi",
            "pt": "quarta feira, ~quarta",
        },
        "thursday": {
            "members": "thursday, thu, thur, thurs, th",
            "en": "thursday*",
            "es": "jueves",
            "fr": "jeudi*",
            "de": "donnerstag*",
            "it": "giovedi",
            "pt": "quinta feira, ~quinta",
        },
        "friday": {
            "members": "friday, fri, fr",
            "en": "friday*",
            "es": "viernes",
            "fr": "vendredi*",
            "de": "freitag*",
            "it": "venerdi",
            "pt": "sexta feira, ~sexta",
        },
        "saturday": {
            "members": "saturday, sat, sa",
            "en": "saturday*",
            "es": "sabado*",
            "fr": "samedi*",
            "de": "samstag*, sonnabend*",
            "it": "sabato",
            "pt": "sabado*",
        },
        "sunday": {
            "members": "sunday, sun, su",
            "en": "sunday*",
            "es": "domingo*",
            "fr": "dimanche*",
            "de": "sonntag*",
            "it": "domenica",
            "pt": "domingo*",
        },
    },
    "month": {
        "context": "month*, mes, meses, mois, monat*, mese, mesi, #",
        "january": {
            "members": "january, jan, 01_january",
            "en": "january",
            "es": "enero",
            "fr": "janvier",
            "de": "januar, janner, jaenner",
            "it": "gennaio",
            "pt": "janeiro",
        },
        "february": {
            "members": "february, feb",
            "en": "february",
            "es": "febrero",
            "fr": "fevrier",
            "de": "februar",
            "it": "febbraio",
            "pt": "fevereiro",
        },
        "march": {
            "members": "march, mar",
            "en": "~march",
            "es": "marzo",
            "fr": "~mars",
            "de": "marz, maerz",
            "it": "marzo",
            "pt": "marco",
        },
        "april": {
            "members": "april, apr",
            "en": "april",
            "es": "abril",
            "fr": "avril",
            "de": "april",
            "it": "aprile",
            "pt": "abril",
        },
        "may": {
            "members": "may",
            "en": "~may",
            "es": "mayo",
            "fr": "~mai",
            "de": "~mai",
            "it": "maggio",
            "pt": "maio",
        },
        "june": {
            "members": "june, jun",
            "en": "june",
            "es": "junio",
            "fr": "juin",
            "de": "juni",
            "it": "giugno",
            "pt": "junho",
        },
        "july": {
            "members": "july, jul",
            "en": "july",
            "es": "julio",
            "fr": "juillet",
            "de": "juli",
            "it": "luglio",
            "pt": "julho",
        },
        "august": {
            "members": "august, aug",
            "en": "august",
            "es": "agosto",
            "fr": "~aout",
            "de": "august",
            "it": "agosto",
            "pt": "agosto",
        },
        "september": {
            "members": "september, sep, sept",
            "en": "september",
            "es": "septiembre, setiembre",
            "fr": "septembre",
            "de": "september",
            "it": "settembre",
            "pt": "setembro",
        },
        "october": {
            "members": "october, oct",
            "en": "october",
            "es": "octubre",
            "fr": "octobre",
            "de": "oktober",
            "it": "ottobre",
            "pt": "outubro",
        },
        "november": {
            "members": "november, nov",
            "en": "november",
            "es": "noviembre",
            "fr": "novembre",
            "de": "november",
            "it": "novembre",
            "pt": "novembro",
        },
        "december": {
            "members": "december, dec",
            "en": "december",
            "es": "diciembre",
            "fr": "decembre",
            "de": "dezember",
            "it": "dicembre",
            "pt": "dezembro",
        },
    },
    "time of day": {
        "context": "time*, slot*, hora*, horario*, franja*, heure*, creneau*, moment*, zeit*, "
        "tageszeit*, uhrzeit*, orario*, fascia*, periodo*, period*",
        "morning": {
            "members": "morning, am_slot",
            "en": "morning*",
            "es": "~manana, por la manana",
            "fr": "matin*, matinee*",
            "de": "vormittag*, ~morgen*",
            "it": "mattin*",
            "pt": "manha*",
        },
        "afternoon": {
            "members": "afternoon, pm_slot",
            "en": "afternoon*",
            "es": "~tarde, por la tarde",
            "fr": "apres midi",
            "de": "nachmittag*",
            "it": "pomeriggi*",
            "pt": "~tarde, a tarde, de tarde",
        },
        "evening": {
            "members": "evening",
            "en": "evening*",
            "es": "~noche, por la noche",
            "fr": "soir*, soiree*",
            "de": "abend*",
            "it": "sera, serata",
            "pt": "~noite",
        },
        "night": {
            "members": "night, overnight_slot",
            "en": "~night*",
            "es": "madrugada",
            "fr": "~nuit*",
            "de": "~nacht*",
            "it": "~notte",
            "pt": "madrugada",
        },
    },
    "currency": {
        "context": "currenc*, moneda*, divisa*, devise*, monnaie*, wahrung*, waehrung*, valuta*, "
        "moeda*",
        "usd": {
            "members": "usd, us_dollar, usdollar, dollar, dollars",
            "en": "dollar, dollars, us dollar*, ~bucks",
            "es": "dolar, dolares",
            "fr": "dollar, dollars",
            "de": "dollar, us dollar",
            "it": "dollaro, dollari",
            "pt": "dolar, dolares",
        },
        "eur": {
            "members": "eur, euro, euros",
            "en": "euro, euros",
            "es": "euro, euros",
            "fr": "euro, euros",
            "de": "euro, euros",
            "it": "euro",
            "pt": "euro, euros",
        },
        "gbp": {
            "members": "gbp, pound, pounds, sterling, pound_sterling",
            "en": "pound*, sterling, quid",
            "es": "libra esterlina*, libras esterlinas, ~libra, ~libras",
            "fr": "livre* sterling, ~livre, ~livres",
            "de": "britisch* pfund, pfund sterling, ~pfund",
            "it": "sterlina, sterline",
            "pt": "libra esterlina*, libras esterlinas, ~libra, ~libras",
        },
        "jpy": {
            "members": "jpy, yen",
            "en": "yen, japanese yen",
            "es": "yen, yenes",
            "fr": "yen, yens",
            "de": "yen",
            "it": "yen",
            "pt": "iene, ienes, yen",
        },
        "chf": {
            "members": "chf, swiss_franc, franc, francs",
            "en": "swiss franc*",
            "es": "franco* suizo*",
            "fr": "franc* suisse*",
            "de": "franken, schweizer franken",
            "it": "franco svizzero, franchi svizzeri",
            "pt": "franco* suico*",
        },
        "cad": {
            "members": "cad, canadian_dollar",
            "en": "canadian dollar*",
            "es": "dolar* canadiense*",
            "fr": "dollar* canadien*",
            "de": "kanadisch* dollar",
            "it": "dollar* canades*",
            "pt": "dolar* canadense*, dolar* canadiano*",
        },
        "aud": {
            "members": "aud, australian_dollar",
            "en": "australian dollar*",
            "es": "dolar* australian*",
            "fr": "dollar* australien*",
            "de": "australisch* dollar",
            "it": "dollar* australian*",
            "pt": "dolar* australian*",
        },
        "mxn": {
            "members": "mxn, mexican_peso, peso, pesos",
            "en": "mexican peso*, ~pesos",
            "es": "peso* mexican*, ~pesos",
            "fr": "peso* mexicain*",
            "de": "mexikanisch* peso*",
            "it": "peso* messican*",
            "pt": "peso* mexican*",
        },
        "brl": {
            "members": "brl, real, reais, brazilian_real",
            "en": "brazilian real*, reais",
            "es": "real* brasileno*, reales",
            "fr": "real* bresilien*",
            "de": "brasilianisch* real",
            "it": "real* brasilian*",
            "pt": "reais, ~real",
        },
        "inr": {
            "members": "inr, rupee, rupees, indian_rupee",
            "en": "rupee*",
            "es": "rupia*",
            "fr": "roupie*",
            "de": "rupie*",
            "it": "rupia, rupie",
            "pt": "rupia*",
        },
        "cny": {
            "members": "cny, rmb, yuan, renminbi",
            "en": "yuan, renminbi, rmb",
            "es": "yuan*, renminbi",
            "fr": "yuan*, renminbi",
            "de": "yuan, renminbi",
            "it": "yuan, renminbi",
            "pt": "yuan*, renminbi",
        },
    },
    "language": {
        "context": "language*, idioma*, lengua*, langue*, sprache*, lingua*, translat*, "
        "traduc*, tradu*, ubersetz*, uebersetz*",
        "english": {
            "members": "en, eng, english, en_us, en_gb, enus, engb",
            "en": "english",
            "es": "ingles",
            "fr": "anglais",
            "de": "englisch*",
            "it": "inglese",
            "pt": "ingles",
        },
        "spanish": {
            "members": "es, spa, spanish, es_es, es_mx, eses, esmx, castilian",
            "en": "spanish",
            "es": "espanol, castellano",
            "fr": "espagnol",
            "de": "spanisch*",
            "it": "spagnolo",
            "pt": "espanhol",
        },
        "french": {
            "members": "fr, fra, fre, french, fr_fr, frfr",
            "en": "french",
            "es": "frances",
            "fr": "francais",
            "de": "franzosisch*, franzoesisch*",
            "it": "francese",
            "pt": "frances",
        },
        "german": {
            "members": "de, deu, ger, german, de_de, dede",
            "en": "german",
            "es": "aleman",
            "fr": "allemand",
            "de": "deutsch*",
            "it": "tedesco",
            "pt": "alemao",
        },
        "italian": {
            "members": "it, ita, italian, it_it, itit",
            "en": "italian",
            "es": "italiano",
            "fr": "italien",
            "de": "italienisch*",
            "it": "italiano",
            "pt": "italiano",
        },
        "portuguese": {
            "members": "pt, por, portuguese, pt_br, pt_pt, ptbr, ptpt",
            "en": "portuguese",
            "es": "portugues",
            "fr": "portugais",
            "de": "portugiesisch*",
            "it": "portoghese",
            "pt": "portugues",
        },
    },
}


# what sets a word apart as a value (see `_set_apart`)
VALUE_MARKS = ("->", "→", "=", ":", "=>")
QUOTES = tuple("\"'«»“”„‘’`")
AS_WORDS = {"as", "como", "comme", "als", "come"}
TO_WORDS = {"to", "into", "a", "al", "au", "en", "auf", "zu", "in", "para", "em"}
# groups whose units and currencies a number's symbol names ("°C", "€20", "5 km")
SYMBOL_GROUPS = ("temperature unit", "unit system", "distance unit", "weight unit", "currency")
# words of an argument's or tool's name that say nothing of its role
GENERIC_NAME_WORDS = {
    "type", "value", "kind", "name", "key", "code", "field", "param", "option", "options",
    "setting", "settings", "flag", "filter", "list", "get", "set", "create", "update", "delete",
    "search", "find", "add", "make", "fetch", "query", "send", "post", "put", "check", "run",
    "new", "book", "api", "the", "for", "and", "with", "from", "info", "data", "details",
}  # fmt: skip


@dataclass(frozen=True)
class Phrase:
    concept: str  # "priority:high"
    words: tuple[str, ...]  # folded words; a trailing "*" matches a prefix
    weak: bool


@dataclass(frozen=True)
class Mention:
    concept: str
    start: int  # word index
    end: int  # word index after its last word
    weak: bool


@dataclass(frozen=True)
class Tables:
    members: dict[str, frozenset[str]]  # member key -> concepts
    by_word: dict[str, list[Phrase]]  # a phrase by its first word
    by_prefix: dict[str, list[Phrase]]  # a phrase whose first word is a prefix, by 3 letters
    context: dict[str, list[str]]  # group -> the words of its role
    weak_words: frozenset[str]  # one-word phrases that are weak somewhere


def _parse(text: str) -> list[str]:
    return [w.strip() for w in values.fold(text).split(",") if w.strip()]


@lru_cache(maxsize=1)
def tables() -> Tables:
    members: dict[str, set[str]] = {}
    by_word: dict[str, list[Phrase]] = {}
    by_prefix: dict[str, list[Phrase]] = {}
    context: dict[str, list[str]] = {}
    weak_words: set[str] = set()
    for group, entries in VOCABULARY.items():
        context[group] = _parse(entries["context"])
        for name, entry in entries.items():
            if name == "context":
                continue
            concept = f"{group}:{name}"
            for spelling in entry["members"].split(","):
                members.setdefault(values.ident_key(spelling), set()).add(concept)
            for language in LANGUAGES:
                for raw in _parse(entry.get(language, "")):
                    weak = raw.startswith("~")
                    words = tuple(re.findall(r"[^\W_]+\*?", raw.lstrip("~")))
                    phrase = Phrase(concept, words, weak)
                    first = words[0]
                    if first.endswith("*"):
                        by_prefix.setdefault(first[:3], []).append(phrase)
                    else:
                        by_word.setdefault(first, []).append(phrase)
                    if weak and len(words) == 1 and not first.endswith("*"):
                        weak_words.add(first)
    return Tables(
        {k: frozenset(v) for k, v in members.items()},
        by_word,
        by_prefix,
        context,
        frozenset(weak_words),
    )


def size() -> dict[str, int]:
    """How big the vocabulary is: groups, concepts, member spellings, phrases."""
    t = tables()
    phrases = {
        (p.concept, p.words) for ps in [*t.by_word.values(), *t.by_prefix.values()] for p in ps
    }
    return {
        "groups": len(VOCABULARY),
        "concepts": len({c for cs in t.members.values() for c in cs}),
        "member_spellings": len(t.members),
        "phrases": len(phrases),
    }


def concepts_of(member: str) -> frozenset[str]:
    """The concepts a member spells ("metric" -> celsius, km, metric)."""
    return tables().members.get(values.ident_key(member), frozenset())


def _matches(pattern: str, word: str) -> bool:
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return word == pattern


def mentions(words: tuple[str, ...]) -> list[Mention]:
    """The vocabulary's phrases among a message's words; a phrase inside a longer one of
    another concept is dropped ("economy" in "premium economy")."""
    t = tables()
    found = []
    for i, word in enumerate(words):
        for phrase in t.by_word.get(word, []) + t.by_prefix.get(word[:3], []):
            n = len(phrase.words)
            if i + n <= len(words) and all(
                _matches(p, w) for p, w in zip(phrase.words, words[i : i + n], strict=True)
            ):
                found.append(Mention(phrase.concept, i, i + n, phrase.weak))
    return [
        m
        for m in found
        if not any(
            o.concept != m.concept
            and o.start <= m.start
            and m.end <= o.end
            and o.end - o.start > m.end - m.start
            for o in found
        )
    ]


def _shared(a: str, b: str) -> int:
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def cognate(a: str, b: str) -> bool:
    """Two words of five letters or more, the same word in another language or inflected:
    they share their first letters (at least four) and differ in at most a third of them
    ("priority", "priorität"; "economy", "económica"; "vacation", "vacaciones")."""
    a, b = values.fold(a), values.fold(b)
    if min(len(a), len(b)) < MIN_COGNATE or _shared(a, b) < COGNATE_PREFIX:
        return False
    return _distance(a, b) <= COGNATE_SHARE * max(len(a), len(b))


def english_form(a: str, b: str) -> bool:
    """`b` is `a` with another English ending ("delivery", "delivered"; "close", "closed"):
    in English text another word of the same family, not a translation."""
    a, b = values.fold(a), values.fold(b)
    n = _shared(a, b)
    return a[n:] in ENGLISH_ENDINGS and b[n:] in ENGLISH_ENDINGS


@dataclass
class Message:
    """A message's words, the sentence of each word and the vocabulary's phrases in it."""

    text: str
    tokens: list[tuple[str, int, int]]
    words: tuple[str, ...]
    sentence: list[int]
    found: list[Mention]
    quantities: list[values.Quantity]

    def span_text(self, start: int, end: int) -> str:
        return self.text[self.tokens[start][1] : self.tokens[end - 1][2]]


@lru_cache(maxsize=512)
def message(text: str) -> Message:
    tokens = values.tokens_with_spans(text)
    breaks = [m.start() for m in re.finditer(r"[.!?;\n]+(?:\s|$)", text)]
    sentence = [sum(1 for b in breaks if b < start) for _, start, _ in tokens]
    words = tuple(t for t, _, _ in tokens)
    return Message(text, tokens, words, sentence, mentions(words), values.quantities(text))


def role_words(*names: str) -> list[str]:
    """The words of an argument's or tool's name that say what it is about ("priority" of
    `ticket_priority`, "ticket" of `create_ticket`)."""
    return [
        w
        for name in names
        for w in values.key_words(name)
        if len(w) >= 3 and w not in GENERIC_NAME_WORDS and not w.isdigit()
    ]


def _in_role(
    msg: Message, start: int, end: int, group_words: Sequence[str], arg_words: Sequence[str],
    entity_words: Sequence[str], window: int = CONTEXT_WINDOW,
) -> bool:  # fmt: skip
    """Beside a word of its role, in the same sentence: a word of its group or of the
    argument's name (by a cognate too: "Priorität" for `priority`) within CONTEXT_WINDOW words;
    the tool's entity ("tickets" of `list_tickets`) or a number (a month's day) next to it."""
    if _set_apart(msg, start, end):
        return True
    lo, hi = max(0, start - window), min(len(msg.words), end + window)
    for k in range(lo, hi):
        if start <= k < end or msg.sentence[k] != msg.sentence[start]:
            continue
        word = msg.words[k]
        adjacent = k in (start - 1, end)
        if adjacent and word.isdigit() and "#" in group_words:
            return True
        if any(p != "#" and _matches(p, word) for p in group_words):
            return True
        if any(word.startswith(a) or cognate(word, a) for a in arg_words):
            return True
        if adjacent and any(word.startswith(e) or cognate(word, e) for e in entity_words):
            return True
    return False


def _set_apart(msg: Message, start: int, end: int) -> bool:
    """Words written as a value: quoted ("«en revisión»"), after an arrow, "=" or a colon
    ("OPS-1 -> Done", "priority: high"), after "as" ("mark it as open"), or closing a sentence
    after "to" ("set it to high.")."""
    first, last = msg.tokens[start][1], msg.tokens[end - 1][2]
    before, after = msg.text[:first].rstrip(), msg.text[last:].lstrip()
    if before.endswith(VALUE_MARKS) or (before.endswith(QUOTES) and after.startswith(QUOTES)):
        return True
    previous = msg.words[start - 1] if start > 0 and not before.endswith(",") else ""
    closing = not after or after[0] in ".!?;,)"
    # "mark it as open", not "As normal, ..." at the start of a sentence
    after_verb = start > 1 and msg.sentence[start - 2] == msg.sentence[start]
    return (previous in AS_WORDS and after_verb) or (previous in TO_WORDS and closing)


def _groups_words(concepts: frozenset[str]) -> list[str]:
    context = tables().context
    return [w for g in sorted({c.split(":")[0] for c in concepts}) for w in context[g]]


def naming(
    member: str,
    text: str,
    arg_words: Sequence[str] = (),
    entity_words: Sequence[str] = (),
    lenient: bool = False,
) -> str | None:
    """The words of `text` that name `member`, or None.

    `lenient` reads a weak word or a cognate without its role beside it: how a user names the
    member the call chose (such a reading only ever grounds a call, never flags one)."""
    t = tables()
    msg = message(text)
    key = values.ident_key(member)
    concepts = t.members.get(key, frozenset())
    groups = _groups_words(concepts)
    weak_own = len(key) <= SHORT_MEMBER or key in t.weak_words
    # a code of one or two letters ("de", "L") beside its role word only: "talla L"
    window = 1 if len(key) <= SHORT_MEMBER else CONTEXT_WINDOW
    for start_char, end_char in values.find_ident(member, msg.tokens):
        first = next(i for i, tok in enumerate(msg.tokens) if tok[1] == start_char)
        last = next(i for i, tok in enumerate(msg.tokens) if tok[2] == end_char)
        if any(  # "economy" of "premium economy": the longer phrase's concept
            m.concept not in concepts
            and m.start <= first
            and last < m.end
            and m.end - m.start > last + 1 - first
            for m in msg.found
        ):
            continue
        if (
            lenient
            or not weak_own
            or _in_role(msg, first, last + 1, groups, arg_words, entity_words, window)
        ):
            return text[start_char:end_char]
    for mention in msg.found:
        if mention.concept not in concepts:
            continue
        if (
            lenient
            or not mention.weak
            or _in_role(
                msg,
                mention.start,
                mention.end,
                _groups_words(frozenset({mention.concept})),
                arg_words,
                entity_words,
            )
        ):
            return msg.span_text(mention.start, mention.end)
    symbols = {c for c in concepts if c.split(":")[0] in SYMBOL_GROUPS}
    for q in msg.quantities:
        named = {q.unit, q.currency} - {None}
        if key in named or any(symbols & concepts_of(str(n)) for n in named):
            return text[q.start : q.end]
    if len(values.key_words(member)) == 1 and len(key) >= MIN_COGNATE:
        for k, word in enumerate(msg.words):
            # a translation names it anywhere; another English form only beside its role
            if cognate(word, key) and (
                lenient
                or not english_form(key, word)
                or _in_role(msg, k, k + 1, [], arg_words, entity_words)
            ):
                return msg.span_text(k, k + 1)
    return None
