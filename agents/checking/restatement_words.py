"""The words a restatement of a tool result may use around the result's keys and values, in
English, Spanish, French, German, Italian and Portuguese (folded: no accents): connectives and
function words that state no value, a glossary of words for what a call did and for a result's
keys, and cognates. The structured check (`agents.checking.structured`) reads a claim as a
restatement only when every word that is not a value is one of these or a word of the run.
"""

from __future__ import annotations

from difflib import SequenceMatcher

# The words a restatement of a result uses around its keys and values.
_CONNECTIVES = (
    "a an the is are was were be been being has have had with and or of for to in on at by as "
    "its it this that these those there their which who whose call called calls tool tools "
    "function returned returns return result results response responded shows showed show "
    "reported reports report says said states stated lists listed list gives gave given "
    "indicates indicated currently current value values set of from according per "
    "found here following total data record records entry entries item items field fields "
    "degrees degree unit units status now already still again just so far marked"
)
# The same function words in the other languages agents answer in (Spanish, German, French;
# folded: no accents): articles, prepositions, pronouns, auxiliaries. No word of them states a
# value, so a restatement in those languages is judged on its values and content words alone.
_FUNCTION_WORDS = (
    "el la los las un una unos unas de del al en con y o es son esta estan fue era ha han "
    "he hay para por que se su sus lo le les a como segun tu te mi me muy ya "
    "der die das den dem des ein eine einen einem einer und oder ist sind war waren hat haben "
    "wurde wurden wird werden mit von vom zu zum zur im in am an auf aus bei fur um bis nach "
    "uber es sie er du ich dein deine ihr ihre sein seine laut "
    "le la les un une des du de d l et ou est sont etait a ont avec pour par sur dans au aux en "
    "que qui se sa son ses vous votre vos tu ton ta il elle "
    "ya ahora aun todavia sigue jetzt schon bereits noch wieder maintenant deja encore toujours "
    "queda quedan reste restent bleibt bleiben steht stehen resta restano fica font "
    "j ai avons avez habe haben hemos han uhr e "
    "re ll ve s d m geht ira va antes avant vor prima "
    # the records a list holds, by the names agents give them
    "option options choice choices opcion opciones optionen choix resultados ergebnisse "
    "resultats "
    "registro registros eintrag eintrage enregistrement enregistrements resultado ergebnis "
    "resultat "
    # the English connectives above in those languages: what a tool returned, showed, found
    "devuelto devolvio devuelve muestra mostro indica dice encontrado encontrada "
    "encontre renvoie renvoye indique montre affiche trouve trouvee liefert lieferte zeigt "
    "zeigte meldet gibt ergab gefunden restituisce mostra trovato trovata "
    "estado statut stato actual actuel actuelle aktuell aktuelle attuale "
    "insgesamt gesamt totale actualmente actuellement derzeit momentan attualmente "
    "about approximately around roughly environ aproximadamente unos unas circa etwa ungefahr rund "
    # Italian and Portuguese: articles, prepositions and their contractions, pronouns, auxiliaries
    "il lo la i gli le un uno una di del dello della dei degli delle al allo alla ai agli alle "
    "da dal dalla dai dalle in nel nello nella nei negli nelle su sul sulla sui sulle con per "
    "tra fra e ed o sono era erano ha hanno ho abbiamo stato stata sara che come suo sua "
    "tuo tua ti ci si ora adesso gia ancora "
    "o a os as um uma uns umas do da dos das ao aos em na nas num numa pelo pela pelos "
    "pelas com para e ou foi era sao tem teem esta estao ser seu sua teu tua te agora ja "
    "ainda como segundo "
    # possessive pronouns: whose a thing is, said to the user ("in deiner Playlist"); not
    # "mon", "tue" (weekdays) nor "mes" (a month in Spanish)
    "your my our his her mein meine meinem meinen meiner meines deinem deinen deiner deines "
    "seinem seinen seiner seines ihrem ihren ihrer ihres unser unsere unserem unseren unserer "
    "euer eure mis tus nuestro nuestra nuestros nuestras ma tes notre nos leur leurs "
    "mio mia miei mie tuoi suoi sue nostro nostra loro meu minha meus minhas teus tuas "
    "seus suas nosso nossa "
    # French elisions ("c'est", "qu'il") and demonstratives
    "c qu ce cet cette ces "
    # a restatement's own verbs of being and passing on: "is now", "passa a ser", "wird"
    "passa passe sera serao werden wird ist "
    # where a value stands in time beside a date or time it is given with: since, until, after
    "since until till after desde hasta despues depuis jusqu jusque apres seit bis nach "
    "danach dal dalla fino dopo ate depois"
)
# Words for what a call did and for the keys of a result, in English inflections and in
# Spanish, French, German, Italian and Portuguese (folded), each row with the English stems it
# stands for. A word is covered only where one of its stems is a key of the result, a word of a
# tool's name, an argument or a value ("reiniciado" over restart_service, "taux" over {"rate":
# …}): it names what the run holds and adds no fact of its own.
_GLOSSARY = (
    (
        "creat reserv book confirm",
        "created creado creada creados creadas cree creee erstellt angelegt erzeugt creato "
        "creata criado criada hecho hecha fait faite",
    ),
    (
        "book reserv event appoint meeting",
        "booked reservado reservada reserve reservee gebucht reserviert prenotato prenotata "
        "reservato reservata",
    ),
    (
        "invit attend",
        "invited invitado invitada invitados invite invitee invites invitees eingeladen "
        "invitato invitata convidado convidada",
    ),
    ("assign", "asignado asignada zugewiesen zugeordnet assegnato assegnata atribuido atribuida"),
    (
        "restart reboot",
        "restarted rebooted reiniciado reiniciada redemarre redemarree neugestartet gestartet neu "
        "riavviato riavviata",
    ),
    (
        "schedul start plan",
        "programado programada programme programmee planifie planifiee prevu prevue geplant "
        "eingeplant programmato programmata agendado agendada",
    ),
    (
        "cancel",
        "cancelado cancelada annule annulee storniert abgesagt annullato annullata",
    ),
    (
        "updat chang modif set",
        "updated changed modified actualizado actualizada cambiado cambiada modificado "
        "modificada modifie modifiee aktualisiert geandert aggiornato aggiornata atualizado",
    ),
    (
        "delet remov",
        "deleted removed eliminado eliminada borrado borrada supprime supprimee geloscht entfernt "
        "eliminato eliminata",
    ),
    (
        "send sent schedul",
        "enviado enviada envoye envoyee gesendet verschickt raus inviato inviata",
    ),
    (
        "mode set switch scale replica target",
        "switch switches switched cambia cambiara pasa pasara passe passera bascule basculera "
        "wechselt schaltet",
    ),
    ("stage phase", "etapa etape fase stufe"),
    ("close", "cierre cloture abschluss chiusura fechamento"),
    ("rate", "taux tasa kurs wechselkurs tasso taxa"),
    ("fee", "comision frais gebuhr gebuhren commissione"),
    ("amount total valu", "importe monto montant betrag importo valor valeur wert"),
    ("refund", "reembolso remboursement erstattung ruckerstattung rimborso"),
    ("return rma", "devolucion retour rucksendung reso devolucao"),
    ("transfer", "transferencia virement uberweisung bonifico"),
    ("deal opportun", "oportunidad opportunite gelegenheit opportunita oportunidade"),
    ("party guest people person size", "personas personnes personen persone pessoas people"),
    ("code id", "codigo code kode codice identificador identifiant kennung"),
    ("date day", "fecha datum data"),
    ("time hour", "hora heure uhrzeit"),
    ("price cost quot", "precio prix preis prezzo preco cours kurs quotazione cotacao"),
    ("mode", "modo modus"),
    ("target setpoint", "objetivo cible ziel obiettivo"),
    # the nouns of common API records (orders, shipments, payments, travel, weather, issues)
    ("label", "etiqueta etiquette etikett etichetta"),
    ("track", "seguimiento suivi sendungsverfolgung sendungsnummer tracciamento rastreamento"),
    (
        "order",
        "pedido pedidos commande commandes bestellung bestellungen ordine ordini encomenda "
        "encomendas",
    ),
    ("customer client", "cliente kunde kundin"),
    ("address street", "direccion adresse anschrift indirizzo endereco"),
    ("phone", "telefono telephone telefon"),
    ("email mail", "correo courriel mail"),
    ("message", "mensaje mensajes nachricht nachrichten messaggio messaggi mensagem mensagens sms"),
    (
        "file object content",
        "files fichier fichiers datei dateien archivo archivos file ficheiro ficheiros arquivo "
        "arquivos",
    ),
    ("merg request", "mr pr"),
    ("invoice", "factura facture rechnung fattura fatura"),
    ("payment pay", "pago paiement zahlung pagamento"),
    ("balance", "saldo solde kontostand"),
    ("account", "cuenta compte konto conto"),
    ("product item", "producto produit produkt prodotto produto articulo article artikel"),
    ("quantiti qty", "cantidad quantite menge anzahl quantita quantidade"),
    ("stock", "existencias lager bestand magazzino estoque"),
    ("deliver ship", "entrega livraison lieferung consegna envio expedition versand spedizione"),
    ("arriv", "llegada arrivee ankunft arrivo chegada"),
    ("depart", "salida depart abfahrt abflug partenza partida"),
    ("flight", "vuelo vol flug volo voo"),
    ("room", "habitacion chambre zimmer camera quarto"),
    ("night", "noche noches nuit nuits nacht nachte notte notti"),
    ("weather", "tiempo meteo temps wetter"),
    ("forecast", "pronostico prevision previsions vorhersage previsione previsao"),
    ("rain precip shower", "rain lluvia pluie regen pioggia chuva"),
    ("max high", "high highest maximum maxima maximo maximale hochst hochstwert massima"),
    ("min low", "low lowest minimum minima minimo minimale tiefst tiefstwert"),
    (
        "prob precip chanc",
        "chance probability probabilidad probabilite wahrscheinlichkeit probabilita",
    ),
    ("rate price cost ship", "postage porto affranchissement franqueo"),
    # the thing a shipment or a tracking call is about
    (
        "package parcel shipment return label track",
        "paket paquete colis pacco pacote encomenda encomendas",
    ),
    (
        "rating review score",
        "valoracion puntuacion note bewertung bewertungen valutazione avaliacao",
    ),
    ("issue ticket incident", "incidencia incidente vorgang ticket probleme problema"),
    ("drop", "gib ab abgeben entrega entregar deposer deposez deposez consegna"),
    ("original", "ursprunglich ursprungliche ursprungliches ursprunglichen originale originel"),
    ("method payment", "zahlungsmittel zahlungsart metodo methode moyen mittel"),
    ("wind", "viento vent wind vento"),
    ("humid", "humedad humidite luftfeuchtigkeit feuchtigkeit umidita umidade"),
    ("distanc", "distancia entfernung distanza"),
    ("durat", "duracion duree dauer durata duracao"),
    ("user login", "usuario utilisateur benutzer utente"),
    ("titl", "titulo titre titel titolo"),
    ("descript", "descripcion beschreibung descrizione descricao"),
    (
        "due deadlin",
        "vencimiento echeance fallig scadenza vencimento vence vencen scade scadono expire",
    ),
    ("task todo", "tarea tareas tache taches aufgabe aufgaben compito compiti tarefa tarefas"),
    ("seat", "asiento asientos plaza plazas place places platz platze posto posti"),
    ("repositori repo", "repositorio depot"),
    ("comment", "comentario commentaire kommentar commento"),
    # what a call did, for the verbs APIs are named by (stop, share, issue, add, ship, trigger)
    (
        "stop halt",
        "stopped gestoppt angehalten detenido detenida arrete arretee fermato fermata parado "
        "parada",
    ),
    (
        "share permiss",
        "shared compartido compartida partage partagee geteilt freigegeben condiviso condivisa "
        "compartilhado compartilhada compartilhei",
    ),
    ("issu refund", "issued emitido emitida emis emise ausgestellt emesso emessa"),
    (
        "add insert append creat",
        "added anadido anadida agregado agregada ajoute ajoutee hinzugefugt aggiunto aggiunta "
        "adicionado adicionada",
    ),
    (
        "ship fulfil",
        "shipped enviado expedie expediee versandt verschickt spedito spedita expedido expedida",
    ),
    (
        "trigger incident alert",
        "triggered disparado disparada declenche declenchee ausgelost attivato attivata "
        "acionado acionada",
    ),
    ("mute snooz silenc", "muted silenciado silenciada sourdine stummgeschaltet silenziato"),
    ("payout transfer", "auszahlung pago versement pagamento"),
    ("draft", "borrador brouillon entwurf bozza rascunho"),
    ("rule firewall", "regla regle regel regola regra"),
    ("node", "nodo noeud knoten"),
    ("restart", "reinicios redemarrages neustarts riavvii reinicios"),
    ("review", "resenas avis recensioni avaliacoes"),
    ("network", "red reseau netz rete rede"),
    ("ingress inbound", "entrante entrant eingehend ingresso entrada"),
    ("egress outbound", "saliente sortant ausgehend uscita saida"),
    ("list", "lista liste"),
    ("playlist", "lista"),
    ("chang percent", "variacion variation veranderung variazione variacao"),
)
GLOSSARY: dict[str, frozenset[str]] = {}
for _stems_of, _row_words in _GLOSSARY:
    for _word in _row_words.split():
        GLOSSARY[_word] = GLOSSARY.get(_word, frozenset()) | frozenset(_stems_of.split())
COGNATE_CHARS = 5  # words this long may be cognates ("oportunidad" ~ "opportunity")
COGNATE_RATIO = 0.8
# endings that differ between cognates (folded): "-ación"/"-ation", "-idad"/"-ity", "-iert"/"-ed"
_ENDING_WORDS = (
    "aciones acion ation ations cion tion tions sion idad ite itat ity ities iert ierte ung "
    "ungen ados adas idos idas ado ada ido ida ees ee es e s ed ing ive if ivo iva"
)
_ENDINGS = sorted(_ENDING_WORDS.split(), key=len, reverse=True)
CONNECTIVES = frozenset(_CONNECTIVES.split()) | frozenset(_FUNCTION_WORDS.split())


def glossed(word: str, vocab: set[str]) -> bool:
    """The word is one of GLOSSARY's, standing for a stem the run holds."""
    return any(
        v == c or (len(c) >= 4 and (v.startswith(c) or v.endswith(c)))
        for c in GLOSSARY.get(word, ())
        for v in vocab
    )


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


def cognate(word: str, vocab: set[str]) -> bool:
    """The word is a cognate of a word the run holds: both at least COGNATE_CHARS long, their
    roots (without the endings languages differ in) alike by COGNATE_RATIO ("oportunidad" ~
    "opportunity", "calificación" ~ "qualification", "blockiert" ~ "blocked")."""
    if len(word) < COGNATE_CHARS or not word.isalpha():
        return False
    root = _root(word)
    for other in vocab:
        if len(other) < COGNATE_CHARS or not other.isalpha():
            continue
        matcher = SequenceMatcher(None, root, _root(other))
        if matcher.real_quick_ratio() >= COGNATE_RATIO and matcher.ratio() >= COGNATE_RATIO:
            return True
    return False
