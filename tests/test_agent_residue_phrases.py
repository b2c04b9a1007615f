"""Left-over words that state nothing the matched values do not, in every language agents
answer in: idioms ("is in place"), "local time" beside a time, possessives, hyphenated
compounds, a weak enum word away from its role, a path a call passed ("under alb/…"), "the
last N days" over a call's window of N days, and German nouns after an article. Each has a
twin where a changed or added fact still keeps the claim from being supported. The examples
are written here; none is taken from an evaluation set."""

from __future__ import annotations

import pytest

from tests.claim_support import verdict

FIREWALL = {"name": "allow-ssh-22", "sourceRanges": ["10.1.2.0/24"], "status": "DONE"}


@pytest.mark.parametrize(
    "claim",
    [
        "Firewall rule allow-ssh-22 is in place.",
        "La règle allow-ssh-22 est en place.",
        "La regla allow-ssh-22 está en vigor.",
        "Die Firewall allow-ssh-22 ist in Kraft.",
        "La regola allow-ssh-22 è in vigore.",
        "A regra allow-ssh-22 está em vigor.",
    ],
)
def test_an_idiom_that_a_thing_holds_states_nothing(claim):
    result = verdict(claim, FIREWALL, "gcp_firewalls_insert")
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "Firewall rule allow-ssh-22 is not in place.",
        "La règle allow-ssh-22 n'est pas en place.",
        "La regla allow-ssh-22 no está en vigor.",
        "Die Firewall allow-ssh-22 ist nicht in Kraft.",
        "La regola allow-ssh-22 non è in vigore.",
        "A regra allow-ssh-22 não está em vigor.",
        "Firewall rule allow-ssh-23 is in place.",
    ],
)
def test_a_negated_idiom_or_another_rule_is_not_supported(claim):
    result = verdict(claim, FIREWALL, "gcp_firewalls_insert")
    assert result.status != "supported", result.as_row()


DROPOFF = {"fee": 675, "currency": "USD", "dropoff_time_estimated": "2026-07-06T18:45:00Z"}


@pytest.mark.parametrize(
    "claim",
    [
        "Estimated drop-off around 18:45 your time.",
        "Livraison estimée vers 18h45, heure locale.",
        "Entrega estimada hacia las 18:45, hora local.",
        "Lieferung gegen 18:45 Ortszeit.",
        "Consegna prevista verso le 18:45, ora locale.",
        "Entrega prevista por volta das 18:45, hora local.",
    ],
)
def test_local_time_beside_a_matched_time_and_a_compound_state_nothing(claim):
    result = verdict(claim, DROPOFF, "doordash_create_delivery_quote")
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "Fee of $6.75, local time.",
        "Frais de 6,75 $, heure locale.",
        "Tarifa de 6,75 $. Hora local.",
        "Gebühr 6,75 $. Ortszeit.",
        "Tariffa di 6,75 $. Ora locale.",
        "Taxa de 6,75 $. Hora local.",
        "Livraison estimée vers 19h45, heure locale.",
        "Lieferung gegen 19:45 Ortszeit.",
        "Estimated drop-off around 18:45, tracking off.",
        "Estimated drop-off around 19:45 your time.",
    ],
)
def test_local_time_with_no_time_or_a_state_word_alone_is_not_supported(claim):
    result = verdict(claim, DROPOFF, "doordash_create_delivery_quote")
    assert result.status != "supported", result.as_row()


TRACK = {
    "trackingNumber": "902065261688",
    "latestStatusDetail": {"statusByLocale": "In transit", "scanLocation": {"city": "KÖLN"}},
}


@pytest.mark.parametrize(
    "claim",
    [
        "A encomenda está em trânsito, última leitura em Köln.",
        "El paquete está en tránsito, última lectura en Köln.",
        "Il pacco è in transito, ultima lettura a Köln.",
    ],
)
def test_a_weak_enum_word_away_from_its_role_names_no_option(claim):
    result = verdict(claim, TRACK, "fedex_track_by_number")
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "A encomenda está em trânsito, acesso de leitura em Köln.",
        "El paquete está en tránsito, acceso de lectura en Köln.",
        "Il pacco è in transito, accesso in lettura a Köln.",
        "A encomenda está em trânsito, última leitura em Bonn.",
    ],
)
def test_a_weak_enum_word_beside_its_role_or_another_city_is_not_supported(claim):
    result = verdict(claim, TRACK, "fedex_track_by_number")
    assert result.status != "supported", result.as_row()


BUCKET = {
    "KeyCount": 3,
    "Contents": [{"Key": f"alb/2027/02/04/{i}.log", "Size": 100 * i} for i in (1, 2, 3)],
}
PREFIX = {"Bucket": "logs", "Prefix": "alb/2027/02/04/"}


@pytest.mark.parametrize(
    "claim",
    [
        "KeyCount 3 under alb/2027/02/04/.",
        "KeyCount 3 sous alb/2027/02/04/.",
        "KeyCount 3 unter alb/2027/02/04/.",
        "KeyCount 3 bajo alb/2027/02/04/.",
        "KeyCount 3 sotto alb/2027/02/04/.",
        "KeyCount 3 sob alb/2027/02/04/.",
    ],
)
def test_under_a_path_the_call_passed_restates_its_prefix(claim):
    result = verdict(claim, BUCKET, "s3_list_objects_v2", PREFIX)
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "KeyCount 3 under alb/2027/02/05/.",
        "KeyCount 3 sous alb/2027/03/04/.",
        "KeyCount 3 unter elb/2027/02/04/.",
        "KeyCount 3 bajo alb/2026/02/04/.",
        "KeyCount 3 sotto alb/2027/02/14/.",
        "KeyCount 3 sob alb/2027/12/04/.",
        "KeyCount 3 under 100.",
        "KeyCount 3 unter 5.",
    ],
)
def test_under_another_path_or_a_number_is_not_supported(claim):
    result = verdict(claim, BUCKET, "s3_list_objects_v2", PREFIX)
    assert result.status != "supported", result.as_row()


ABUSE = {"data": {"ipAddress": "45.1.2.3", "abuseConfidenceScore": 0}}
WINDOW = {"ipAddress": "45.1.2.3", "maxAgeInDays": 90}


@pytest.mark.parametrize(
    "claim",
    [
        "45.1.2.3: abuse score 0 in the last 90 days.",
        "45.1.2.3: puntuación de abuso 0 en los últimos 90 días.",
        "45.1.2.3 : score d'abus 0 sur les 90 derniers jours.",
        "45.1.2.3: Abuse-Score 0 in den letzten 90 Tagen.",
        "45.1.2.3: punteggio di abuso 0 negli ultimi 90 giorni.",
        "45.1.2.3: pontuação de abuso 0 nos últimos 90 dias.",
    ],
)
def test_the_last_n_days_restates_the_calls_window(claim):
    result = verdict(claim, ABUSE, "abuseipdb_check", WINDOW)
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim, args",
    [
        ("45.1.2.3: abuse score 0 in the last 30 days.", WINDOW),
        ("45.1.2.3: puntuación de abuso 0 en los últimos 90 días.", {"ipAddress": "45.1.2.3"}),
        ("45.1.2.3: Abuse-Score 0 in den letzten 90 Stunden.", WINDOW),
        ("45.1.2.3 : score d'abus 0 sur les 30 derniers jours.", WINDOW),
        ("45.1.2.3: punteggio di abuso 0 negli ultimi 9 giorni.", WINDOW),
        ("45.1.2.3: pontuação de abuso 0 nos últimos 90 dias.", {"maxAgeInDays": 30}),
    ],
)
def test_another_window_or_no_window_argument_is_not_supported(claim, args):
    result = verdict(claim, ABUSE, "abuseipdb_check", args)
    assert result.status != "supported", result.as_row()


PLAYLIST = {"tracks": {"items": [{"name": "Bohemian Rhapsody", "artists": [{"name": "Queen"}]}]}}


@pytest.mark.parametrize(
    "claim, language",
    [
        ("„Bohemian Rhapsody“ von Queen ist jetzt in deiner Playlist.", "de"),
        ("“Bohemian Rhapsody” by Queen is now in your playlist.", "en"),
        ("« Bohemian Rhapsody » de Queen est dans notre playlist.", "fr"),
        ("“Bohemian Rhapsody” de Queen está en nuestra playlist.", "es"),
        ("“Bohemian Rhapsody” dei Queen è nella mia playlist.", "it"),
        ("“Bohemian Rhapsody” do Queen está na minha playlist.", "pt"),
    ],
)
def test_a_possessive_is_a_function_word(claim, language):
    result = verdict(claim, PLAYLIST, "spotify_add_to_playlist", language=language)
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "„Bohemian Rhapsody“ von Queen ist jetzt in Annas Playlist.",
        "„Bohemian Rhapsody“ von Queen ist nicht in deiner Playlist.",
        "“Bohemian Rhapsody” by Queen is now in Anna's playlist.",
        "“Bohemian Rhapsody” de Queen está en la playlist de Marta.",
        "“Bohemian Rhapsody” dei Queen non è nella mia playlist.",
    ],
)
def test_a_name_or_a_negation_beside_a_possessive_is_not_supported(claim):
    result = verdict(claim, PLAYLIST, "spotify_add_to_playlist", language="de")
    assert result.status != "supported", result.as_row()


def test_a_german_noun_after_an_article_is_not_a_name():
    claim = "Die Regel allow-ssh-22 steht."
    assert verdict(claim, FIREWALL, "gcp_firewalls_insert", language="de").status == "supported"


@pytest.mark.parametrize(
    "claim, language",
    [
        ("Die Regel allow-ssh-22 von Müller steht.", "de"),  # a name after a preposition
        ("Regel allow-ssh-22 steht für Schmidt.", "de"),  # a name with no article
        ("Die Regel allow-ssh-22 ist gesperrt.", "de"),  # a state the run does not hold
        ("Die Regel allow-ssh-22 steht. Die Firma Hartmann prüft sie.", "de"),  # a clause
        ("The rule allow-ssh-22 is held by Hartmann.", "en"),
    ],
)
def test_an_invented_german_name_or_state_still_blocks(claim, language):
    result = verdict(claim, FIREWALL, "gcp_firewalls_insert", language=language)
    assert result.status != "supported", result.as_row()


SUBSCRIPTION = {"id": "sub_1abc", "trial_end": "2027-03-06T00:00:00Z", "amount": 49}


def test_a_date_written_across_a_comma_is_in_the_clause_it_ends_in():
    claim = "Das Abo sub_1abc ist bis Samstag, 6 März in der Testphase."
    result = verdict(claim, SUBSCRIPTION, "stripe_create_subscription", language="de")
    assert result.status == "supported", result.as_row()
    claim = "Das Abo sub_1abc ist bis Samstag, 6 März in der Testphase, danach gesperrt."
    result = verdict(claim, SUBSCRIPTION, "stripe_create_subscription", language="de")
    assert result.status != "supported", result.as_row()


def test_a_word_after_an_ip_address_is_not_what_it_counts():
    claim = "45.1.2.3 tiene una puntuación de abuso del 0 %."
    assert verdict(claim, ABUSE, "abuseipdb_check", WINDOW).status == "supported"
    claim = "45.1.2.3 tiene 7 reportes, puntuación de abuso del 0 %."
    assert verdict(claim, ABUSE, "abuseipdb_check", WINDOW).status != "supported"


def test_an_ip_address_the_call_passed_lends_no_number_by_its_octets():
    args = {"ipAddress": "45.1.2.3"}
    assert verdict("45.1.2.3 tiene 3 reportes.", ABUSE, "abuseipdb_check", args).status == "open"
    claim = "45.1.2.3: puntuación de abuso 0."
    assert verdict(claim, ABUSE, "abuseipdb_check", args).status == "supported"
