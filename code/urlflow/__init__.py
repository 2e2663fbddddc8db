"""URL mode's flow: the policy and each flow's record (url_mode), the setup page that stands in
for a consent screen, with no I/O (setup_page), and Nube de Copias, exercise 3's simulated
OAuth provider (nube_copias). Imports core/, notes/ and shared/ only."""
