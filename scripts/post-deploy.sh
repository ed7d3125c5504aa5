#!/usr/bin/env bash
# After `sam deploy`: the steps CloudFormation cannot do. Idempotent; safe to run after every deploy.
#   scripts/post-deploy.sh STACK_NAME [REGION]
# 1. Activates the stack's SES receipt rule set (only one rule set per region can be active, and
#    CloudFormation cannot make it so): until then inbound mail is silently dropped. Another
#    application's active rule set is never replaced unless SEMFS_REPLACE_RULE_SET=1 says so.
# 2. Checks the LLM key: a secret still holding the stack's placeholder (or nothing) is an error.
# 3. Uploads the web page (shared/semfs/web, the files semfs serve serves) to the stack's web bucket with
#    its configuration (static/config.json: the API's URL, the hosted UI's endpoints, the client id), and
#    asks CloudFront to drop its cached copies. With your own OIDC issuer (JwtIssuer), set SEMFS_WEB_CLIENT_ID,
#    SEMFS_WEB_AUTHORIZE_URL, SEMFS_WEB_TOKEN_URL (and SEMFS_WEB_LOGOUT_URL) for the page's sign-in.
# Exits 1 when a step needs someone's action, after saying which and how.
set -euo pipefail
stack="${1:?usage: scripts/post-deploy.sh STACK_NAME [REGION]}"
region="${2:-${AWS_REGION:-$(aws configure get region)}}"
PLACEHOLDER="replace-me"  # what template.yaml's OpenAIKeySecret holds until someone fills it in
status=0
output() {
  aws cloudformation describe-stacks --stack-name "$stack" --region "$region" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
rule_set="$(output ReceiptRuleSetName)"
if [ -n "$rule_set" ] && [ "$rule_set" != "None" ]; then
  active="$(aws ses describe-active-receipt-rule-set --region "$region" --query 'Metadata.Name' --output text 2>/dev/null || true)"
  if [ "$active" = "$rule_set" ]; then
    echo "inbound mail: receipt rule set '$rule_set' is active"
  elif [ -n "$active" ] && [ "$active" != "None" ] && [ "${SEMFS_REPLACE_RULE_SET:-0}" != "1" ]; then
    echo "inbound mail: NOT activated. The active receipt rule set is '$active', not this stack's '$rule_set'," >&2
    echo "  and one rule set can be active per region: activating semfs's would stop that one's mail." >&2
    echo "  Add semfs's rule to '$active' yourself, or replace it: SEMFS_REPLACE_RULE_SET=1 $0 $stack $region" >&2
    status=1
  else
    [ -n "$active" ] && [ "$active" != "None" ] && echo "note: replacing the active receipt rule set '$active' with '$rule_set'"
    aws ses set-active-receipt-rule-set --rule-set-name "$rule_set" --region "$region"
    echo "inbound mail: receipt rule set '$rule_set' is active"
  fi
else
  echo "inbound mail: not configured (InboundDomain is empty)"
fi
secret="$(output OpenAIKeySecret)"
key="$(aws secretsmanager get-secret-value --secret-id "$secret" --region "$region" --query SecretString \
  --output text 2>/dev/null || true)"
if [ -z "$key" ] || [ "$key" = "None" ] || [ "$key" = "$PLACEHOLDER" ]; then
  echo "LLM key: NOT set in $secret (it holds the stack's placeholder, or nothing): the LLM and embeddings" >&2
  echo "  endpoint will refuse every call, and files end FAILED_CONFIG. Put the key in, then retry them:" >&2
  echo "  aws secretsmanager put-secret-value --region $region --secret-id $secret --secret-string 'sk-…'" >&2
  status=1
else
  echo "LLM key: set in $secret"
fi
web_bucket="$(output WebBucketName)"
if [ -n "$web_bucket" ] && [ "$web_bucket" != "None" ]; then
  web="$(cd "$(dirname "$0")/.." && pwd)/shared/semfs/web"
  sign_in="$(output SignInUrl)"
  if [ -n "$sign_in" ] && [ "$sign_in" != "None" ]; then  # the stack's user pool and its hosted UI
    client="$(output UserPoolClientId)"
    authorize="$sign_in/oauth2/authorize" token="$sign_in/oauth2/token" logout="$sign_in/logout"
  else
    client="${SEMFS_WEB_CLIENT_ID:-}" authorize="${SEMFS_WEB_AUTHORIZE_URL:-}"
    token="${SEMFS_WEB_TOKEN_URL:-}" logout="${SEMFS_WEB_LOGOUT_URL:-}"
  fi
  if [ -z "$client" ] || [ -z "$authorize" ] || [ -z "$token" ]; then
    echo "web page: NOT uploaded. With your own OIDC issuer, say how the page signs people in:" >&2
    echo "  SEMFS_WEB_CLIENT_ID=… SEMFS_WEB_AUTHORIZE_URL=… SEMFS_WEB_TOKEN_URL=… $0 $stack $region" >&2
    status=1
  else
    config="$(mktemp)"
    trap 'rm -f "$config"' EXIT
    printf '{"api": "%s", "uploads": "presigned", "auth": {"client_id": "%s", "scope": "openid email", "authorize_url": "%s", "token_url": "%s", "logout_url": "%s"}}\n' \
      "$(output ApiUrl)" "$client" "$authorize" "$token" "$logout" > "$config"
    put() {  # file, key, content type, cache control
      aws s3 cp "$1" "s3://$web_bucket/$2" --region "$region" --content-type "$3" --cache-control "$4" --only-show-errors
    }
    put "$web/index.html" index.html "text/html; charset=utf-8" no-cache
    for module in "$web"/js/*.js; do  # the page's ES modules, served as written (no build step)
      put "$module" "static/js/$(basename "$module")" "text/javascript; charset=utf-8" no-cache
    done
    put "$web/style.css" static/style.css "text/css; charset=utf-8" no-cache
    put "$web/favicon.svg" static/favicon.svg image/svg+xml max-age=86400
    put "$web/favicon.svg" favicon.ico image/svg+xml max-age=86400
    put "$config" static/config.json application/json no-store
    aws cloudfront create-invalidation --distribution-id "$(output WebDistributionId)" --paths "/*" \
      --query Invalidation.Id --output text > /dev/null
    echo "web page: $(output WebUrl) (sign in with a user from scripts/add-user.sh)"
  fi
else
  echo "web page: not hosted by this stack (HostWebApp=false)"
fi
exit "$status"
