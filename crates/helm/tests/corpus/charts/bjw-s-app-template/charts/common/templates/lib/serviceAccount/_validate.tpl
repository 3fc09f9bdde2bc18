{{/*
Validate ServiceAccount values
*/}}
{{- define "bjw-s.common.lib.serviceAccount.validate" -}}
  {{- $rootContext := .rootContext -}}
  {{- $serviceAccountValues := .object -}}
{{- end -}}
