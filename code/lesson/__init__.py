"""The lesson's notes server, assembled: its configuration and hooks (server), its tools
(tools) and the extension point a learner's solution plugs into (extension). Imports the layers
below: transports/ (to show the setup page over HTTP), urlflow/, core/, notes/ and shared/."""
