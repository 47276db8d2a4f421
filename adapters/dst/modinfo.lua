name = "XiaoTangYuan companion (example)"
description = "Talks to the XiaoTangYuan server on this PC (xtyserver) over POST /v1/http."
author = "xtyserver"
version = "0.1.0"
api_version = 10
dst_compatible = true
client_only_mod = true
all_clients_require_mod = false
configuration_options = {
    { name = "token", label = "Token", hover = "xtyserver token show", options = { { description = "paste", data = "" } }, default = "" },
    { name = "port", label = "Port", options = { { description = "8765", data = 8765 } }, default = 8765 },
    { name = "salt", label = "Salt", hover = "made once per install; keep it", options = { { description = "auto", data = "" } }, default = "" },
}
