#!/usr/bin/python3
"""aesgcm_encrypt.py IN OUT [--tamper]: encrypts IN as XEP-0454 (OMEMO media sharing) wants it, AES-256-GCM
with a random 12-byte IV and key, ciphertext followed by the 16-byte tag, into OUT; prints the URL fragment
(IV then key, in hex). --tamper flips one ciphertext byte afterwards (the tag then fails)."""
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

source, target = sys.argv[1], sys.argv[2]
key, iv = os.urandom(32), os.urandom(12)
sealed = bytearray(AESGCM(key).encrypt(iv, open(source, "rb").read(), None))
if "--tamper" in sys.argv[3:]:
    sealed[len(sealed) // 3] ^= 0x01
open(target, "wb").write(bytes(sealed))
print(iv.hex() + key.hex())
