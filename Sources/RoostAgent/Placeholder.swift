internal import CGLib
internal import CNotify
internal import CCurl
internal import CSQLite
internal import COpenSSL
internal import CExpat
internal import CResolv
func _probe() { _ = sqlite3_libversion(); _ = XML_ExpatVersion(); _ = curl_version(); _ = notify_is_initted(); _ = g_key_file_new(); _ = OpenSSL_version_num(); }
