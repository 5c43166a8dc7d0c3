{{/* The chart name, or nameOverride. */}}
{{- define "kas.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of every object, the Service the certificate covers and the webhook configurations.
The release name alone when it already contains the chart name (`helm install
kube-admission-server ...` gives the same names as the kustomize base). Kept to 50 characters
so the derived names (<name>-serving-cert, <name>-leader) stay valid.
*/}}
{{- define "kas.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels on every object: the kustomize base's, plus Helm's bookkeeping. */}}
{{- define "kas.labels" -}}
app.kubernetes.io/name: {{ include "kas.name" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The pods' identity: what the Deployment, Service, PodDisruptionBudget and spread select. */}}
{{- define "kas.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kas.name" . }}
app.kubernetes.io/component: webhook
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Secret the server keeps its generated CA and serving certificate in (src/tls/secret-api.ts). */}}
{{- define "kas.certsSecret" -}}
{{- printf "%s-certs" (include "kas.fullname" .) }}
{{- end }}

{{/* Lease of the leader election (src/config/load-config.ts). */}}
{{- define "kas.lease" -}}
{{- printf "%s-leader" (include "kas.fullname" .) }}
{{- end }}

{{/* Secret cert-manager writes the serving certificate to, in cert-manager mode. */}}
{{- define "kas.servingCertSecret" -}}
{{- printf "%s-serving-cert" (include "kas.fullname" .) }}
{{- end }}

{{- define "kas.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The policy file: .Values.policy with extraExcludedNamespaces added to its excludedNamespaces
(the server's default, kube-system, when the policy names none).
*/}}
{{- define "kas.policy" -}}
{{- $policy := deepCopy .Values.policy }}
{{- $excluded := list "kube-system" }}
{{- if hasKey $policy "excludedNamespaces" }}
{{- $excluded = $policy.excludedNamespaces | default list }}
{{- end }}
{{- if .Values.extraExcludedNamespaces }}
{{- $_ := set $policy "excludedNamespaces" (concat $excluded .Values.extraExcludedNamespaces | uniq) }}
{{- end }}
{{- toYaml $policy }}
{{- end }}

{{/*
"true" when some expression of the policy mentions authorizer: the server then answers its
checks with SubjectAccessReviews (src/lifecycle/authorization.ts decides the same from the compiled
expressions). A mention in a message also counts: the grant is never missing, at worst unused.
*/}}
{{- define "kas.asksAuthorizer" -}}
{{- if regexMatch "\\bauthorizer\\b" (toYaml .Values.policy) }}true{{- end }}
{{- end }}

{{/*
"true" when some expression of the policy mentions namespaceObject, or readNamespaces says custom
handlers read it: the server then lists and watches Namespaces (src/lifecycle/namespace-objects.ts
decides the same from the compiled expressions and the handlers' readsNamespaceObject). A mention
in a message also counts: the grant is never missing, at worst unused.
*/}}
{{- define "kas.readsNamespaceObject" -}}
{{- if or .Values.readNamespaces (regexMatch "\\bnamespaceObject\\b" (toYaml .Values.policy)) }}true{{- end }}
{{- end }}

{{/*
The names of the ValidatingAdmissionPolicies and Bindings (kas.nativePolicyNames) and of the params
ConfigMaps (kas.nativeParamsNames) the server may register: one per cel entry whose engine (or the
policy's) is native or auto, "<fullname>-<entry>" and "<fullname>-<entry>-params" as
src/registration/native-policy-objects.ts names them; empty when no entry may go native, and then no rule
for them is granted (docs/native-policies.md, RBAC).
*/}}
{{- define "kas.nativePolicyNames" -}}
{{- $names := list -}}
{{- $default := (.Values.policy).engine | default "webhook" -}}
{{- range (.Values.policy).webhooks -}}
{{- if and (eq .kind "cel") (has (.engine | default $default) (list "native" "auto")) -}}
{{- $names = append $names (printf "%s-%s" (include "kas.fullname" $) .name) -}}
{{- end -}}
{{- end -}}
{{- join ", " $names -}}
{{- end }}

{{/*
The names of the MutatingAdmissionPolicies and Bindings the server may register
(kas.nativeMutatingPolicyNames): one per defaultLabels or defaultResources entry in mode enforce whose engine (or the
policy's) is native or auto, "<fullname>-<entry>"; a warn or audit entry reports what it would
change, which only its webhook can, so it gets no grant.
*/}}
{{- define "kas.nativeMutatingPolicyNames" -}}
{{- $names := list -}}
{{- $default := (.Values.policy).engine | default "webhook" -}}
{{- range (.Values.policy).webhooks -}}
{{- if and (has .kind (list "defaultLabels" "defaultResources")) (eq (.mode | default "enforce") "enforce") (has (.engine | default $default) (list "native" "auto")) -}}
{{- $names = append $names (printf "%s-%s" (include "kas.fullname" $) .name) -}}
{{- end -}}
{{- end -}}
{{- join ", " $names -}}
{{- end }}

{{- define "kas.nativeParamsNames" -}}
{{- $names := list -}}
{{- $default := (.Values.policy).engine | default "webhook" -}}
{{- range (.Values.policy).webhooks -}}
{{- if and (eq .kind "cel") .params (has (.engine | default $default) (list "native" "auto")) -}}
{{- $names = append $names (printf "%s-%s-params" (include "kas.fullname" $) .name) -}}
{{- end -}}
{{- end -}}
{{- join ", " $names -}}
{{- end }}

{{/*
The resources the background audit lists and watches, as JSON: API group -> resources, from the
policy's reported validating entries (their rules, or their kind's default rules as
src/policy/rules/ defines them: Pods and the workload kinds; a subresource as its resource), with
namespaces in the core group; "" when no entry is reported (src/reports/reports-rbac.ts renders
the same for kustomize: render --reports-rbac).
*/}}
{{- define "kas.reportedResources" -}}
{{- $groups := dict "" (list "namespaces") -}}
{{- $any := false -}}
{{- $policyReport := true -}}
{{- if hasKey (.Values.policy | default dict) "report" }}{{ $policyReport = .Values.policy.report }}{{ end -}}
{{- $podsAndWorkloads := list (dict "apiGroups" (list "") "resources" (list "pods" "replicationcontrollers" "podtemplates")) (dict "apiGroups" (list "apps") "resources" (list "deployments" "statefulsets" "daemonsets" "replicasets")) (dict "apiGroups" (list "batch") "resources" (list "jobs" "cronjobs")) -}}
{{- range (.Values.policy).webhooks -}}
{{- $reported := $policyReport -}}
{{- if hasKey . "report" }}{{ $reported = .report }}{{ end -}}
{{- if and $reported (not (has .kind (list "defaultLabels" "defaultResources"))) -}}
{{- $any = true -}}
{{- range (.rules | default $podsAndWorkloads) -}}
{{- $rule := . -}}
{{- range $rule.apiGroups -}}
{{- $group := . -}}
{{- $resources := get $groups $group | default list -}}
{{- range $rule.resources }}{{ $resources = append $resources (first (splitList "/" .)) }}{{ end -}}
{{- $_ := set $groups $group $resources -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $any }}{{ toJson $groups }}{{ end -}}
{{- end }}
