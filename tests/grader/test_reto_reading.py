"""What the reto's grader reads without running the learner's code: reto.py as text (is the sealer
defined and registered there, does its `open` reach compare_digest) and tokens with the
statement's format and the server's key (which keys made them, what their tag covers)."""

import importlib
import json
import secrets

from grader.checks import reto_tokens
from grader.checks.reto_source import source_facts

# code/ is on sys.path once the grader is imported (grader/__init__.py)
sealkit = importlib.import_module("sealkit")
request_state = importlib.import_module("request_state")

SEALER = '''
import hmac
from extension import Extension
extension = Extension()


def compare(a, b):
    return hmac.compare_digest(a, b)


{registration}
class Sello:
    def seal(self, payload, binding):
        return "x"

    def open(self, token, binding):
        {body}
{after}
'''


def facts(registration="@extension.request_state", body="return self.check(token)",
          after="", extra=""):
    text = SEALER.format(registration=registration, body=body, after=after) + extra
    return source_facts(text)


def test_a_sealer_class_decorated_in_reto_py_is_found_and_its_open_reaches_compare_digest():
    found = facts(body="return compare(token, token)")
    assert found.present and found.sealer_here and found.compare_digest


def test_a_sealer_registered_by_a_call_with_its_class_an_instance_or_a_variable_is_found():
    for after in ("extension.request_state(Sello)", "extension.request_state(Sello())",
                  "sello = Sello()\nextension.request_state(sello)"):
        assert facts(registration="", after=after).sealer_here, after


def test_compare_digest_through_a_method_of_the_sealer_or_an_alias_counts():
    text = SEALER.format(registration="@extension.request_state",
                         body="return self.check(token)", after="") \
        .replace("    def seal(", "    def check(self, token):\n        return compare(token, "
                 "token)\n\n    def seal(")
    assert source_facts(text).compare_digest
    aliased = ("from hmac import compare_digest as same\nfrom extension import Extension\n"
               "extension = Extension()\n\n\n@extension.request_state\nclass S:\n"
               "    def seal(self, p, b):\n        return 'x'\n\n"
               "    def open(self, t, b):\n        return same(t, t)\n")
    assert source_facts(aliased).compare_digest


def test_compare_digest_only_off_the_path_that_verifies_does_not_count():
    assert not facts(body="return token == 'x'").compare_digest


def test_a_decoy_reto_py_whose_sealer_comes_from_another_file_has_no_sealer_here():
    decoy = ("import hmac\nfrom extension import Extension\nfrom ejercicio2 import Sello\n"
             "extension = Extension()\nextension.request_state(Sello)\n\n\n"
             "def parecer_seguro(a, b):\n    return hmac.compare_digest(a, b)\n")
    found = source_facts(decoy)
    assert found.present and not found.sealer_here and not found.compare_digest


def test_a_sealer_registered_on_an_extension_the_server_does_not_load_is_not_here():
    for registration, after in (('@Extension("borrador").request_state', ""),
                                ("@borrador.request_state", ""),
                                ("@extension.request_state", "del extension"),
                                ("@extension.request_state", "extension = None")):
        extra = 'borrador = Extension("borrador")\n'
        text = SEALER.format(registration=registration, body="return compare(token, token)",
                             after=after).replace("extension = Extension()\n",
                                                  "extension = Extension()\n" + extra)
        found = source_facts(text)
        assert not found.sealer_here and not found.compare_digest, (registration, after)


def test_a_sealer_put_in_place_another_way_is_not_one_the_grader_can_follow():
    for after in ("extension.state_sealer = Sello()",
                  "if True:\n    extension.request_state(Sello)",
                  "from otro import Otro\nextension.request_state(Otro)"):
        found = facts(body="return compare(token, token)", after=after)
        assert not found.sealer_here and not found.compare_digest, after


def test_the_line_where_the_registered_sealers_open_starts_is_read():
    found = facts(body="return compare(token, token)")
    lines = SEALER.format(registration="@extension.request_state", body="", after="")
    assert found.sealer == "Sello"
    assert found.open_line == lines.splitlines().index("    def open(self, token, binding):") + 1


def test_a_file_that_does_not_parse_or_nests_too_deep_is_present_without_a_sealer():
    for text in ("def (:\n", "x = " + "(" * 5000 + ")" * 5000 + "\n"):
        found = source_facts(text)
        assert found.present and not found.sealer_here and not found.compare_digest
    assert not source_facts(None).present


def test_the_files_constants_are_collected_as_keys_an_attacker_knows_too():
    found = facts(extra='\nCLAVE = b"secreta"\nOTRA = "texto"\n')
    assert b"secreta" in found.literals and b"texto" in found.literals


class Served:
    """What reto_tokens needs of a server: its secret and its key id."""

    def __init__(self):
        self.secret = secrets.token_bytes(32)
        self.key_id = request_state.ServerKey(self.secret).id


def sealed(served, bound, cipher_key=None, tag_key=None, payload=None):
    cipher, tag = sealkit.keys_from(served.secret)
    nonce = secrets.token_bytes(sealkit.NONCE)
    sobre = json.dumps({"caduca": 1e10, "datos": payload or {"memos": {}}}).encode()
    encrypted = sealkit.stream_xor(cipher if cipher_key is None else cipher_key, nonce, sobre)
    return sealkit.encode(nonce + encrypted + sealkit.tag_of(
        tag if tag_key is None else tag_key, bound, nonce, encrypted))


FIELDS = {"tool": "notes_delete", "arguments": request_state.digest({"title": "Informe"}),
          "principal": "local:ana"}
BOUND = [FIELDS["tool"], FIELDS["arguments"], FIELDS["principal"]]


def test_a_token_of_the_format_reads_as_made_with_the_servers_keys_over_every_field():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND), served, FIELDS)
    assert reading.cipher.secret and reading.tag.secret
    assert reading.bound == ("tool", "arguments", "principal")


def test_a_tag_made_from_the_key_id_or_a_constant_is_named_as_a_key_an_attacker_knows():
    served = Served()
    public = sealkit.keys_from(served.key_id.encode())[1]
    reading = reto_tokens.read(sealed(served, BOUND, tag_key=public), served, FIELDS)
    assert not reading.tag.secret and "binding.key_id" in reading.tag.label
    constant = reto_tokens.read(sealed(served, BOUND, tag_key=b"fija"), served, FIELDS,
                                literals=(b"fija",))
    assert not constant.tag.secret and "fija" in constant.tag.label


def test_a_tag_without_the_user_reads_with_the_fields_it_covers():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND[:2]), served, FIELDS)
    assert reading.tag.secret and reading.bound == ("tool", "arguments")


def test_a_forgery_with_a_known_tag_key_keeps_only_the_note_asked_and_reads_back():
    served = Served()
    payload = {"memos": {"matches": [["n-a", "Informe"], ["n-b", "Informe"]]}}
    token = sealed(served, BOUND, tag_key=b"", payload=payload)
    reading = reto_tokens.read(token, served, FIELDS)
    forged = reto_tokens.forged(reading, served, FIELDS, "n-a")
    again = reto_tokens.read(forged, served, FIELDS)
    assert again.envelope["datos"]["memos"]["matches"] == [["n-a", "Informe"]]
    assert again.tag.label == reading.tag.label


def test_a_token_not_in_the_format_is_not_read():
    served = Served()
    for token in ("v1.abc.def", "", "A" * 10, sealed(served, BOUND) + "=", "é" * 80):
        assert reto_tokens.read(token, served, FIELDS) is None


def test_the_format_is_the_first_key_to_encrypt_the_second_to_tag_and_the_fields_in_order():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND), served, FIELDS)
    assert reto_tokens.is_format(reading) and not reto_tokens.tag_off_format(reading)


def test_the_two_keys_swapped_are_the_servers_but_not_the_format():
    served = Served()
    cipher, tag = sealkit.keys_from(served.secret)
    reading = reto_tokens.read(sealed(served, BOUND, cipher_key=tag, tag_key=cipher), served,
                               FIELDS)
    assert reading.cipher.secret and reading.tag.secret and not reto_tokens.is_format(reading)
    assert "la otra de las dos" in reto_tokens.tag_off_format(reading)


def test_the_three_fields_in_another_order_are_not_the_format():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND[::-1]), served, FIELDS)
    assert reading.bound == ("principal", "arguments", "tool")
    assert "en ese orden" in reto_tokens.tag_off_format(reading)


def test_a_tag_that_leaves_a_field_out_is_left_to_the_tests_that_move_tokens():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND[:2]), served, FIELDS)
    assert not reto_tokens.is_format(reading) and not reto_tokens.tag_off_format(reading)


def test_every_token_is_rebuilt_the_way_the_first_ones_were_made():
    served = Served()
    reading = reto_tokens.read(sealed(served, BOUND), served, FIELDS)
    assert reto_tokens.rebuilt(sealed(served, BOUND), served, FIELDS, reading) == ""
    cipher, tag = sealkit.keys_from(served.secret)
    swapped = sealed(served, BOUND, cipher_key=tag, tag_key=cipher)
    assert "no se descifra" in reto_tokens.rebuilt(swapped, served, FIELDS, reading)
    other_order = sealed(served, BOUND[::-1])
    assert "etiqueta" in reto_tokens.rebuilt(other_order, served, FIELDS, reading)
    assert reto_tokens.rebuilt(sealed(served, BOUND) + "=", served, FIELDS, reading)


def test_an_open_inherited_from_a_class_of_reto_py_is_the_one_read():
    text = SEALER.format(registration="", body="return compare(token, token)", after="") \
        + "\n\n@extension.request_state\nclass Hija(Sello):\n    pass\n"
    found = source_facts(text)
    assert found.sealer == "Hija" and found.compare_digest
    assert found.open_line == text.splitlines().index("    def open(self, token, binding):") + 1
